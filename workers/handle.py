# The billing domain's charge in Python, for: wfx worker run --domain billing --command 'python3 workers/handle.py'
# The job comes as JSON on stdin; the output goes as JSON on stdout; exit 1 fails the attempt.
import json
import sys

job = json.load(sys.stdin)
data = job["input"]
if job["action"] != "charge":
    print(json.dumps({"errorCode": "UNKNOWN_ACTION", "errorMessage": job["action"], "retry": False}))
    sys.exit(1)
if data["amount"] > 1000:
    print(json.dumps({"errorCode": "CARD_DECLINED", "errorMessage": "declined", "retry": False}))
    sys.exit(1)
print(json.dumps({"receipt": "py-%s-%s" % (data["orderId"], job["attempt"])}))
