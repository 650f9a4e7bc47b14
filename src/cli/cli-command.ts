import type { INestApplicationContext } from '@nestjs/common';
import type { ParseArgsConfig } from 'node:util';
import type { Environment } from '../config/environment.js';

export type CliOptions = NonNullable<ParseArgsConfig['options']>;
export type CliValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** A refusal the CLI prints as usage (exit 2) instead of a failure (exit 1). */
export class CliUsageError extends Error {}

export interface CliCommand {
  name: string;
  usage: string;
  /** One sentence for `help` and `<command> --help`. */
  description: string;
  /** More, for `<command> --help` only: what it does in detail. */
  help?: string;
  options: CliOptions;
  /** What each of `options` means, by option name, for `<command> --help`. */
  flags?: Record<string, string>;
  /**
   * `app`: runs inside the Nest application context (migrations applied on boot).
   * `env`: runs before Nest boots, with the validated environment only (e.g. db:status).
   */
  context: 'app' | 'env';
  /**
   * The exit code for `run`'s result (default 0). A command that did its work but not all of it
   * (a replay whose events fail again) exits 1 with its result still printed, so that a script
   * or a scheduler running it notices.
   */
  exitCode?(result: unknown): number;
  run(input: {
    app?: INestApplicationContext;
    env: Environment;
    values: CliValues;
  }): Promise<unknown>;
}
