// Optional k6 script for users who have k6 (not used by CI; the Node runner, bench/runner.ts, is the
// reference: it also measures CPU, memory, the bare-proxy floor and Portkey side by side).
//   k6 run -e BASE_URL=http://127.0.0.1:8080 -e KEY=sk-sy-... -e MODEL=demo bench/k6-chat.js
//   k6 run -e BASE_URL=http://127.0.0.1:8787 -e KEY=any -e MODEL=bench-model \
//          -e PORTKEY_CUSTOM_HOST=http://127.0.0.1:9090/v1 bench/k6-chat.js        # Portkey in front of the mock
// RATE (requests/s, default 200), DURATION (default 30s), STREAM=1 for SSE (k6 reads the whole stream).
// constant-arrival-rate is an open loop: k6 reports dropped_iterations when it could not send on time.
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  scenarios: {
    open_loop: {
      executor: 'constant-arrival-rate',
      rate: Number(__ENV.RATE || 200),
      timeUnit: '1s',
      duration: __ENV.DURATION || '30s',
      preAllocatedVUs: 200,
      maxVUs: 2000,
    },
  },
};

const stream = __ENV.STREAM === '1';
const headers = { 'content-type': 'application/json', authorization: `Bearer ${__ENV.KEY}` };
if (__ENV.PORTKEY_CUSTOM_HOST) {
  headers['x-portkey-provider'] = 'openai';
  headers['x-portkey-custom-host'] = __ENV.PORTKEY_CUSTOM_HOST;
}

export default function () {
  const response = http.post(`${__ENV.BASE_URL}/v1/chat/completions`, JSON.stringify({
    model: __ENV.MODEL || 'demo',
    stream,
    messages: [{ role: 'user', content: 'benchmark prompt' }],
  }), { headers });
  check(response, {
    'status is 200': (r) => r.status === 200,
    'complete answer': (r) => (stream ? String(r.body).includes('[DONE]') : String(r.body).includes('"choices"')),
  });
}
