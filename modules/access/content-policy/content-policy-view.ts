import { type ContentPolicyState, contentPolicyStream } from '../../../events/index.js';
import type { ControlPlaneState } from '../../../projections/control-plane/index.js';
import { contentPolicyAttachments } from './content-policy-guard.js';

/** A content policy as the admin API and the CLI show it: its definition in the file's shape, its versions, and where it is attached. */
export function contentPolicyView(state: ControlPlaneState, id: string, policy: Exclude<ContentPolicyState, { status: 'absent' }>, streamVersion?: number) {
  return {
    id,
    status: policy.status,
    /** The policy's version (1, 2, … per definition change): what RequestAdmitted records. */
    version: policy.version,
    /** The stream's version, for If-Match (a retirement moves it, not the policy's version). */
    streamVersion: streamVersion ?? state.versions.get(contentPolicyStream(id)) ?? 0,
    ...policy.definition,
    attachedTo: contentPolicyAttachments(state, id),
  };
}

export type ContentPolicyView = ReturnType<typeof contentPolicyView>;
