import { TELEMETRY_CHANNELS } from '@holdfast/core';
import { describe, expect, it } from 'vitest';
import { CHANNELS } from '../src/messages.js';

// The adapter restates core's channel names on purpose (it depends on the
// OpenTelemetry API only); this keeps the two lists from drifting apart.
describe('channel names', () => {
  it('are the ones @holdfast/core publishes on', () => {
    expect(CHANNELS).toEqual(TELEMETRY_CHANNELS);
  });
});
