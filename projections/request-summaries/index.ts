/** Request summaries' public surface: one row per request (`request_summaries`), the read model of request search and the overview. */
export { REQUEST_SUMMARY_STATUSES, RequestSummariesProjection, type RequestSummaryStatus } from './request-summaries.projection.js';
