import type { ConfigurationEvent } from '../../events/configuration-events.js';
import type { Adoption } from '../../src/config/apply/apply-plan.js';
import { adoptionLine, applyReport, startupApplyLog } from '../../src/config/apply/apply-report.js';
import { configurationDecider } from '../../src/config/apply/configuration.decider.js';

const context = { now: new Date('2026-03-01T00:00:00Z'), actor: 'config:a.yaml' };
const field = (name: string, eventId: string) => ({ field: name, eventId, actor: 'admin:root', recordedAt: '2026-02-01T00:00:00.000Z' });

describe('the configuration aggregate: each runtime edit is adopted once', () => {
  const first = { type: 'AdoptRuntimeEdits' as const, source: 'a.yaml', definitions: [{ stream: 'alias-chat', fields: [field('policy.maxAttempts', 'e2')] }] };

  test('a first adoption is recorded as asked; the same again records nothing', () => {
    const events = configurationDecider.decide(first, configurationDecider.initialState(), context);
    expect(events).toEqual([{ type: 'ConfigurationAdopted', data: { source: 'a.yaml', definitions: first.definitions } }]);
    const state = events.reduce((s, e: ConfigurationEvent) => configurationDecider.evolve(s, e), configurationDecider.initialState());
    expect(configurationDecider.decide(first, state, context)).toEqual([]);
    expect(configurationDecider.decide({ ...first, definitions: [] }, configurationDecider.initialState(), context)).toEqual([]);
  });

  test('only what is not adopted yet is recorded: another field, another stream, or a later edit of the same field', () => {
    const state = configurationDecider.decide(first, configurationDecider.initialState(), context)
      .reduce((s, e: ConfigurationEvent) => configurationDecider.evolve(s, e), configurationDecider.initialState());
    const next = {
      type: 'AdoptRuntimeEdits' as const, source: 'b.yaml', definitions: [
        { stream: 'alias-chat', fields: [field('policy.maxAttempts', 'e2'), field('policy.maxAttempts', 'e5'), field('policy.ttftTimeoutMs', 'e2')] },
        { stream: 'alias-other', fields: [field('policy.maxAttempts', 'e2')] },
        { stream: 'tenant-acme', fields: [] },
      ],
    };
    expect(configurationDecider.decide(next, state, context)).toEqual([{
      type: 'ConfigurationAdopted',
      data: {
        source: 'b.yaml', definitions: [
          { stream: 'alias-chat', fields: [field('policy.maxAttempts', 'e5'), field('policy.ttftTimeoutMs', 'e2')] },
          { stream: 'alias-other', fields: [field('policy.maxAttempts', 'e2')] },
        ],
      },
    }]);
  });
});

describe('adoptions as the report and the logs say them', () => {
  const adoption: Adoption = {
    path: 'aliases[0]', definition: 'alias chat', family: 'alias', id: 'chat', field: 'policy.maxAttempts', tracked: 'policy.maxAttempts', value: 2,
    adopts: { actor: 'admin:root', at: new Date('2026-02-01T00:00:00Z'), eventId: 'e2' }, message: 'aliases[0] alias chat: policy.maxAttempts: 2 (set by admin:root at 2026-02-01T00:00:00.000Z)',
  };

  test('a dry run says "would adopt", an apply "adopted", one line per field', () => {
    const [reported] = applyReport({ steps: [], appended: 0, drift: [], adoptions: [adoption] }).adoptions;
    expect(reported).toEqual({
      path: 'aliases[0]', definition: 'alias chat', field: 'policy.maxAttempts', value: 2, changedBy: 'admin:root', changedAt: '2026-02-01T00:00:00.000Z', message: adoption.message,
    });
    expect(adoptionLine(reported, true)).toBe(`would adopt ${adoption.message}: the file says the same as this runtime edit and would own the field again`);
    expect(adoptionLine(reported, false)).toBe(`adopted ${adoption.message}: the file says the same as this runtime edit and owns the field again`);
  });

  test('a start that only adopts logs the adoptions and no "applied … change(s)" line', () => {
    const second = { ...adoption, field: 'policy.ttftTimeoutMs', tracked: 'policy.ttftTimeoutMs', message: 'aliases[0] alias chat: policy.ttftTimeoutMs: 5000 (set by admin:root at 2026-02-01T00:00:00.000Z)' };
    const lines = startupApplyLog('a.yaml', { steps: [], appended: 1, drift: [], adoptions: [adoption, second] });
    expect(lines).toEqual({
      log: [`a.yaml adopted ${adoption.message}: the file says the same as this runtime edit and owns the field again`,
        `a.yaml adopted ${second.message}: the file says the same as this runtime edit and owns the field again`],
      warn: [],
    });
    // The progress of one step is reported without adoptions.
    expect(applyReport({ steps: [], appended: 0, drift: [] }).adoptions).toEqual([]);
  });
});
