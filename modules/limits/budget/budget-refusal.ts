import { Decimal } from 'decimal.js';
import { GatewayError } from '../../canonical/index.js';
import { budgetSetting } from '../limit-setting.js';
import type { BudgetPeriod } from './budget-period.js';
import { fromNanoUsd } from './spend-seeds.js';

/**
 * What a budget reservation is made of, for the refusal to explain it: the admission estimate (input
 * tokens plus the output cap) priced at the dearest route the request may take.
 */
export interface CostBasis {
  inputTokens: number;
  outputTokens: number;
  /** The route (`alias#n`) whose price makes the reservation; null when the request has no route (a cache hit). */
  route: string | null;
  /** The client's parameter that caps output, and whether this request set it; null when output is not capped (embeddings). */
  outputCap: { parameter: string; sent: boolean } | null;
}

/** The budget counter that refused a reservation. */
export interface RefusedBudget {
  kind: 'tenant' | 'key';
  id: string;
  period: BudgetPeriod;
  amountUsd: string;
  resetsAt: Date;
  /** Settled spend plus the reservations of requests in flight (nano-USD). */
  committedNano: number;
  /** Settled spend alone (nano-USD). */
  settledNano: number;
  /** What this request asked to reserve (nano-USD). */
  costNano: number;
}

const PERIOD_WORD = { month: 'monthly', day: 'daily' } as const;

/**
 * The 402 of a hard budget, saying what is true: "exhausted" only when spend and the reservations in
 * flight already reach the budget; otherwise what this request would reserve, what of the budget
 * remains, and how to reserve less. Both name the setting and the reset time.
 */
export function budgetRefusal(refused: RefusedBudget, basis: CostBasis | null, at: Date): GatewayError {
  const who = refused.kind === 'tenant' ? `tenant '${refused.id}'` : `API key '${refused.id}'`;
  const budget = new Decimal(refused.amountUsd);
  const committed = new Decimal(fromNanoUsd(refused.committedNano));
  const spent = new Decimal(fromNanoUsd(refused.settledNano));
  const reserved = Decimal.max(0, committed.minus(spent));
  const setting = budgetSetting(refused.kind, refused.id, refused.period);
  const resets = `It resets at ${refused.resetsAt.toISOString()}`;
  const inFlight = `${usd(reserved)} reserved by requests in flight`;
  let message: string;
  if (committed.greaterThanOrEqualTo(budget)) {
    message = `The ${PERIOD_WORD[refused.period]} budget of ${who} is exhausted: ${usd(spent)} of $${refused.amountUsd} spent, ${inFlight}. ${resets} (${setting}).`;
  } else {
    const cost = new Decimal(fromNanoUsd(refused.costNano));
    const remaining = budget.minus(committed);
    const hint = basis?.outputCap ? ` ${basis.outputCap.sent ? 'Lower' : 'Send'} ${basis.outputCap.parameter} to reserve less, or raise ${setting}.` : ` Raise ${setting} to allow it.`;
    message = `This request may cost up to ${usd(cost, Decimal.ROUND_UP)}${basis ? ` (${costBasisText(basis)})` : ''}; ` +
      `${usd(remaining, Decimal.ROUND_DOWN)} of the ${PERIOD_WORD[refused.period]} $${refused.amountUsd} budget of ${who} remains (${usd(spent)} spent, ${inFlight}).` +
      `${hint} ${resets}.`;
  }
  const resetsIn = Math.max(1, Math.ceil((refused.resetsAt.getTime() - at.getTime()) / 1000));
  return new GatewayError(402, 'budget_exceeded', message, null, { 'retry-after': String(resetsIn) }, {
    scope: `${refused.kind}:${refused.id}`, period: refused.period, resets_at: refused.resetsAt.toISOString(), setting,
  });
}

/** "1,024 output tokens (the default without max_tokens) and 35 input tokens at the price of the dearest route, chat#2". */
function costBasisText(basis: CostBasis): string {
  const defaulted = basis.outputCap && !basis.outputCap.sent ? ` (the default without ${basis.outputCap.parameter})` : '';
  const parts = [...(basis.outputTokens > 0 ? [`${count(basis.outputTokens)} output tokens${defaulted}`] : []), `${count(basis.inputTokens)} input tokens`];
  return `${parts.join(' and ')}${basis.route ? ` at the price of the dearest route, ${basis.route}` : ''}`;
}

/** Dollars to the millionth (what a single token can cost), without trailing zeros. */
function usd(value: Decimal, rounding: Decimal.Rounding = Decimal.ROUND_HALF_UP): string {
  return `$${value.toDecimalPlaces(6, rounding).toFixed()}`;
}

const count = (n: number) => n.toLocaleString('en-US');
