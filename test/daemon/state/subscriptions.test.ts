import t from 'tap';
import {
  bucketMembers,
  subscriptionBucket,
  subscriptionsFor,
  type Subscription,
  type SubscriptionBucket,
} from '../../../src/daemon/state/subscriptions.js';

const sub = (instanceId: string): Subscription => ({ instanceId, nodeInstanceId: 'n2', nodeId: 'wait' });

t.test('a message waits in the bucket of its key, a signal in one bucket whatever the key', async (t) => {
  t.not(subscriptionBucket('acme', 'paid', 'message', 'k1'), subscriptionBucket('acme', 'paid', 'message', 'k2'));
  t.not(
    subscriptionBucket('acme', 'paid', 'message', null),
    subscriptionBucket('acme', 'paid', 'message', ''),
    'no key is not the empty key',
  );
  t.equal(subscriptionBucket('acme', 'paid', 'signal', 'k1'), subscriptionBucket('acme', 'paid', 'signal', null));
  t.not(
    subscriptionBucket('acme', 'paid', 'signal', null),
    subscriptionBucket('other', 'paid', 'signal', null),
    'organizations apart',
  );
});

t.test('an event resumes the messages of its key, then the signals, each bucket in order', async (t) => {
  const subscriptions: Record<string, SubscriptionBucket> = {
    [subscriptionBucket('acme', 'paid', 'message', 'k1')]: new Map([
      ['a|n2', sub('a')],
      ['b|n2', sub('b')],
    ]),
    [subscriptionBucket('acme', 'paid', 'message', 'k2')]: sub('c'),
    [subscriptionBucket('acme', 'paid', 'signal', null)]: sub('s'),
  };
  const ids = (key: string | null) => subscriptionsFor({ subscriptions }, 'acme', 'paid', key).map((s) => s.instanceId);
  t.same(ids('k1'), ['a', 'b', 's']);
  t.same(ids('k2'), ['c', 's']);
  t.same(ids('none'), ['s'], 'signals whatever the key');
  t.same(subscriptionsFor({ subscriptions }, 'other', 'paid', 'k1'), [], 'nothing in another organization');
  t.same(bucketMembers(undefined), []);
  t.same(bucketMembers(sub('x')), [sub('x')], 'a bucket of one is its subscription');
});
