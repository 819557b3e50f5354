// A chat bot on two replicas: messages of one thread arrive at either replica, often while the
// bot is still answering the previous one. The per-key inbox runs one turn at a time per thread
// across both replicas, in the order the messages were posted, and drops nothing: a message that
// arrives during a turn waits for the next turn. A burst sent to the 'debounce' inbox is answered
// in a single turn.
import { LockClient } from '@holdfast/core';
import { connect, withRedis } from '../shared/redis.mjs';

await withRedis(async (url) => {
  const prefix = `example-inbox-${process.pid}`;
  const log = []; // every turn: { replica, thread, texts, start, end }
  const running = new Map(); // thread → the replica whose turn is running now
  let overlaps = 0;

  const replicas = await Promise.all(
    ['replica-1', 'replica-2'].map(async (name) => {
      const redis = await connect(url); // ioredis's new Redis(url): see ../shared/redis.mjs
      const locks = new LockClient(redis, { prefix });
      const inbox = locks.inbox('threads', {
        mode: 'each',
        handler: async (thread, messages, { token }) => {
          if (running.has(thread)) overlaps++;
          running.set(thread, name);
          // "Thinking": the bot's answer takes a while, long enough for new messages to arrive.
          await new Promise((resolve) => setTimeout(resolve, 20));
          running.delete(thread);
          log.push({ replica: name, thread, texts: messages.map((m) => m.text), token });
        },
      });
      const burst = locks.inbox('bursts', {
        mode: 'debounce',
        debounceMs: 200,
        handler: async (thread, messages) => {
          console.log(`[${name}] ${thread}: one turn for ${messages.length} messages: ${messages.map((m) => m.text).join(' / ')}`);
        },
      });
      return { name, redis, locks, inbox, burst };
    }),
  );

  // 3 threads, 4 messages each. A thread's messages are posted one after another (a chat's
  // order), alternately through both replicas; the threads post at the same time.
  const threads = ['thread-a', 'thread-b', 'thread-c'];
  const stored = (
    await Promise.all(
      threads.map(async (thread, t) => {
        const results = [];
        for (let i = 1; i <= 4; i++) results.push(await replicas[(i + t) % 2].inbox.post(thread, { text: `${thread} message ${i}` }));
        return results;
      }),
    )
  ).flat();
  console.log(`posted ${stored.length} messages`);

  // drain() resolves once every message posted before it was handled, by whichever replica.
  await Promise.all(threads.map((thread) => replicas[0].inbox.drain(thread, { waitMs: 20_000 })));

  for (const thread of threads) {
    const turns = log.filter((entry) => entry.thread === thread);
    console.log(`${thread}: ${turns.map((turn) => `${turn.texts.join('')} (${turn.replica})`.replace(`${thread} `, '')).join(', ')}`);
  }
  const inOrder = threads.every((thread) => {
    const texts = log.filter((entry) => entry.thread === thread).flatMap((entry) => entry.texts);
    return texts.join('|') === [1, 2, 3, 4].map((i) => `${thread} message ${i}`).join('|');
  });
  console.log(`handled: ${log.length} of ${stored.length}; in post order per thread: ${inOrder}; overlapping turns: ${overlaps}`);
  console.log(`pending after drain: ${await replicas[1].inbox.pending('thread-a')}`);

  // A burst: three messages quickly, then quiet. 'debounce' waits debounceMs after the newest.
  await replicas[0].burst.post('support-7', { text: 'hi' });
  await replicas[1].burst.post('support-7', { text: 'my order is late' });
  await replicas[0].burst.post('support-7', { text: 'order #1234' });
  await replicas[1].burst.drain('support-7', { waitMs: 20_000 });

  for (const { locks, redis } of replicas) {
    await locks.close();
    redis.disconnect();
  }
});
