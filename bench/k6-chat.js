// Optional k6 script for users who have k6 (not used by CI; the Node runner is the reference):
//   k6 run -e BASE_URL=http://127.0.0.1:8080 -e KEY=sk-sy-... -e MODEL=demo bench/k6-chat.js
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  scenarios: {
    open_loop: { executor: 'constant-arrival-rate', rate: Number(__ENV.RATE || 200), timeUnit: '1s', duration: __ENV.DURATION || '30s', preAllocatedVUs: 200 },
  },
};

export default function () {
  const response = http.post(`${__ENV.BASE_URL}/v1/chat/completions`, JSON.stringify({
    model: __ENV.MODEL || 'demo',
    messages: [{ role: 'user', content: 'benchmark prompt' }],
  }), { headers: { 'content-type': 'application/json', authorization: `Bearer ${__ENV.KEY}` } });
  check(response, { 'status is 200': (r) => r.status === 200 });
}
