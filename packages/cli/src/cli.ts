#!/usr/bin/env node
import { run } from './run.js';

// SIGINT ends `watch` (which restores the terminal) and whatever else runs.
const controller = new AbortController();
process.once('SIGINT', () => controller.abort());
process.once('SIGTERM', () => controller.abort());
void run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  signal: controller.signal,
}).then((code) => {
  process.exitCode = code;
  // Nothing may keep the process alive after the command (a confirmation's stdin).
  process.stdin.unref?.();
});
