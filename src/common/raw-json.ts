import { randomUUID } from 'node:crypto';

/**
 * JSON text stored as it was received, sent as it is. A response holding one is written without
 * parsing the text and serializing it again: a stored webhook payload may be 1 MiB of tiny values
 * (`[{},{},…]`), which parsed take many times that much memory (docs/operations.md, "Tuning").
 *
 * Fastify's reply serializer (serializeReply, set in bootstrap) splices the text in; anywhere else
 * (a log line, the CLI's output) it serializes as the value it holds.
 */
export class RawJson {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    if (!collecting) return JSON.parse(this.text);
    texts.push(this.text);
    return MARK;
  }
}

/** A string no body can hold: a NUL and this process's own random id. */
const MARK = `\u0000raw-json:${randomUUID()}`;
const MARK_TEXT = JSON.stringify(MARK);

/** Whether a serialization is under way (it is synchronous), and the RawJson texts it met. */
let collecting = false;
const texts: string[] = [];

/** Every reply body as JSON, RawJson values spliced in as the text they hold. */
export function serializeReply(body: unknown): string {
  collecting = true;
  try {
    const json = JSON.stringify(body);
    return texts.length === 0 ? json : splice(json);
  } finally {
    collecting = false;
    texts.length = 0;
  }
}

/** `json` with each mark replaced by the text collected for it, in order. */
function splice(json: string): string {
  const parts = json.split(MARK_TEXT);
  if (parts.length !== texts.length + 1) throw new Error('RawJson: a mark was lost in the body.');
  const out: string[] = [parts[0]];
  for (let i = 0; i < texts.length; i++) out.push(texts[i], parts[i + 1]);
  return out.join('');
}
