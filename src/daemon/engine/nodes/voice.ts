import { parseDuration } from '../../../shared/duration.js';
import { fileIdOf } from '../../../shared/file-ref.js';
import { MAX_CALL_TIMEOUT_MS } from '../../../shared/flow/timeouts.js';
import type { VoiceTaskNode } from '../../../shared/flow/types.js';
import type { Spoken, Transcribed } from '../../voice/types.js';
import { asText, type NodeHandler } from './handler.js';
import { retryPolicy, workResult } from './work.js';

const VOICE_TIMEOUT = '1m';

/**
 * voiceTask: speaks `text` into an audio file of the file store, or transcribes the file
 * `audio` names; with the local engines (espeak-ng, pocketsphinx) or a provider. Work outside
 * the step (at least once, as serviceTask). speak's result `{fileId, mimeType, bytes,
 * durationMs, sha256}` (the file journaled with the completion); transcribe's `{text,
 * language}`. Both go to `resultVariable` (default the node id).
 */
export const voiceTask: NodeHandler<VoiceTaskNode> = {
  run: (node, scope) => {
    const base = {
      organization: scope.instance.organization,
      provider: node.provider === undefined ? null : asText(scope.resolve(node.provider)),
      ...(node.model !== undefined && { model: asText(scope.resolve(node.model)) }),
      timeoutMs: Math.min(parseDuration(node.timeout ?? VOICE_TIMEOUT), MAX_CALL_TIMEOUT_MS),
      retry: retryPolicy(node.retry),
    };
    if (node.operation === 'speak') {
      const text = asText(scope.resolve(node.text ?? '') ?? '').trim();
      if (text === '')
        return { kind: 'fail', code: 'VOICE_FAILED', message: 'text resolved to nothing: there is nothing to say' };
      const format = node.format ?? 'wav';
      return {
        kind: 'work',
        work: {
          kind: 'voice',
          call: {
            ...base,
            operation: 'speak',
            text,
            ...(node.voice !== undefined && { voice: asText(scope.resolve(node.voice)) }),
            ...(node.rate !== undefined && { rate: node.rate }),
            format,
            fileName: `${scope.nodeId}.${format}`,
          },
        },
      };
    }
    const ref = scope.resolve(node.audio ?? '');
    const fileId = fileIdOf(ref);
    const audio = fileId === null ? undefined : scope.file(fileId);
    if (!audio)
      return {
        kind: 'fail',
        code: 'FILE_NOT_FOUND',
        message:
          fileId === null
            ? `audio is not a file reference (a fileId or {fileId}); it resolved to ${JSON.stringify(ref)?.slice(0, 80)}`
            : `no file ${fileId} in this organization`,
      };
    return {
      kind: 'work',
      work: {
        kind: 'voice',
        call: {
          ...base,
          operation: 'transcribe',
          audio,
          language: node.language ?? 'en',
          ...(node.vocabulary !== undefined && { vocabulary: node.vocabulary }),
        },
      },
    };
  },
  resume: (node, scope, input) =>
    workResult(input, (value) => {
      const variable = node.resultVariable ?? scope.nodeId;
      if (node.operation === 'transcribe') {
        const heard = value as Transcribed;
        return { kind: 'next', variables: { [variable]: { text: heard.text, language: heard.language } } };
      }
      const { file, durationMs } = value as Spoken;
      return {
        kind: 'next',
        variables: {
          [variable]: {
            fileId: file.fileId,
            name: file.name,
            mimeType: file.mimeType,
            bytes: file.bytes,
            durationMs,
            sha256: file.sha256,
          },
        },
        files: [file],
      };
    }),
};
