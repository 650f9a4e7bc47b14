/**
 * The webhook events' count changes are folded by the generic folder of every list declared with
 * `appendChanges` (webhookEventsList); the name stays for the callers that fold on demand.
 */
export { ListCountsFolder as WebhookEventBlocks } from '../database/list-counts-folder.js';
