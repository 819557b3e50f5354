/*
 * holdfast core lock protocol: a Promela model for spin.
 *
 * What it stands for: the lock hash (owner -> hold count, '@' .. last request
 * id -> token, '@c' while a hand-off is unconfirmed), the FIFO waiter queue and
 * the waiter table with expiry, the fence counter, and the scripts acquire /
 * release / cancel / renew (extend) as atomic steps; the client side of
 * acquire.ts (acquire loop, waiter, hand-off start rule), lease-ops.ts
 * (confirmation, re-entry, release), lock-client.ts (deadline timer, lost,
 * post-loss release, close) and waiters.ts (pub/sub messages).
 *
 * Every modelled script branch carries a tag `@script <file>#<branch>`; the
 * list of branches of the real scripts is test/model/branches.json, and
 * test/model/model.test.ts fails when a script gains a branch it does not name.
 *
 * Time: one global clock `now` in ticks. One tick stands for the time a
 * normal round trip plus an event-loop turn takes; with the defaults below a
 * tick is a quarter of the hand-off claim (500 ms at handoffTimeoutMs 2000).
 * Every clock (server and clients) runs at the same rate: drift is not
 * modelled; the drift margin (2 ms + driftFactor) is rounded up to one tick.
 * The clock advances only when no process can take a step (`timeout`):
 * everything that is not delayed by a fault happens within the tick, and
 * faults (client pauses, delayed requests / replies / messages) are what makes
 * a step wait for later ticks. Every interleaving within a tick is explored.
 *
 * Variants (compile-time):
 *   default       the fixed hand-off protocol (server times in the queued
 *                 reply and the hand-off message, start only with half the
 *                 claim left, post-loss release queued on the hold), plus the
 *                 stale hand-off guard (a hand-off older than the last busy
 *                 attempt, S_h < S_b, is not started on).
 *   -DPREFIX      the hand-off before the fix: claim end lastBusyAt + claim -
 *                 margin, start with more than 1 ms left, post-loss release
 *                 sent at once. Violates (1b) and (1).
 *   -DNOGUARD     the fixed protocol without the stale hand-off guard (what
 *                 acquire.ts#handoffStart does as of 3012cbd: S_h - S_b < 0
 *                 is clamped to 0 and the hand-off is taken).
 *                 Violates (1) and (2) with three clients: a waiter is
 *                 paused past its claim, its timer fires first on resume and
 *                 its retry finds a third client holding; it then reads the
 *                 hand-off message, which looks fresh (S_h - S_b clamped to
 *                 0), and starts beside the holder with the old token.
 *   -DFOREIGN     foreign data written at the lock key at some tick.
 *   -DFOREIGN_UNGUARDED  with FOREIGN: acquire.lua before it refused foreign
 *                 data ({-3}): a hash without holdfast's token field counted
 *                 as a free lock and was written. Violates (5).
 *
 * Properties (assertions, checked in every state where they can change):
 *   (1)  exclusion: when a client enters its section (or its deadline moves
 *        later) no other client is in its section with a local deadline
 *        still ahead; a client whose deadline passed reports `lost` before
 *        its next step, so this is "never two in their sections unless the
 *        earlier one was reported lost first" (frozen holders included).
 *   (1b) a client that started on a hand-off message keeps the lock: it is
 *        not reported lost by its deadline while its confirmation is
 *        pending unless a fault hit it (pause, lost reply, more than one tick
 *        of delay), and its own release never gives the lock away while its
 *        confirmation is pending.
 *   (2)  tokens strictly increase from one holder to the next.
 *   (3)  the server's hold count never exceeds the holds the client asked
 *        for (a resent request is never counted twice).
 *   (4)  liveness within the bound: when the clock reaches MAXT (or nothing
 *        is left to do) every client is done: it held the lock, gave up, or
 *        was refused (foreign key). No waiter is left waiting.
 *   (5)  nothing at a key holdfast did not write is modified.
 */

#ifndef N
#define N 2            /* clients, each with one acquire call */
#endif
#define L 6            /* leaseMs, ticks */
#define C 4            /* handoffTimeoutMs: the claim and the waiter grace, ticks */
#define G C
#define M 1            /* drift margin, ticks */
#ifndef MAXT
#define MAXT 40        /* the clock stops here: (4) is judged at this tick */
#endif
#ifndef PMAX
#define PMAX 8         /* longest client pause, ticks (longer than a claim and a lease) */
#endif

/* fault budgets, for the whole run */
#ifndef LOSS
#define LOSS 1         /* replies lost after apply: the request is resent */
#endif
#ifndef DELAY
#define DELAY 1        /* requests or replies one tick late */
#endif
#ifndef MSGLOSS
#define MSGLOSS 1      /* pub/sub messages lost */
#endif
#ifndef MSGDELAY
#define MSGDELAY 1     /* pub/sub messages late (1 or C+1 ticks) */
#endif
#ifndef PAUSE
#define PAUSE 1        /* client pauses (GC, blocked event loop) */
#endif
#ifndef GIVEUP
#define GIVEUP 1       /* a waiter gives up (abort signal, waitMs, close()) */
#endif
#ifndef CLOSE
#define CLOSE 1        /* close() while holding */
#endif
#ifndef RENEW
#define RENEW 1        /* watchdog renewals */
#endif
#ifndef REENTER
#define REENTER 1      /* nested withLock re-entries */
#endif

/* request kinds */
#define K_ACQ 1
#define K_REL 2
#define K_RELALL 3
#define K_CANCEL 4
#define K_RENEW 5
/* acquire modes */
#define M_TRY 1
#define M_JOIN 2
#define M_REENTER 3
/* slot states */
#define S_IDLE 0
#define S_SENT 1
#define S_REPLIED 2
/* replies */
#define R_GRANTED 1
#define R_BUSY 2
#define R_GONE 3       /* {-1} */
#define R_OTHER 4      /* {-2} */
#define R_CONFLICT 5   /* KeyConflictError (semantics 5) */
#define R_OK 6         /* release {1, n}, renew 1, cancel */
/* client phases */
#define P_START 0
#define P_ATT 1        /* an attempt of the acquire loop is in flight */
#define P_SLEEP 2      /* queued, sleeping */
#define P_SEC 3        /* holding, or lost and winding down */
#define P_DONE 4
/* messages */
#ifndef MQ
#if N > 2
#define MQ 5       /* messages a client may have waiting (a late one holds up those behind it) */
#else
#define MQ 3
#endif
#endif
#define MSG_H 1
#define MSG_F 2

/* request ids and owners: client c, one acquire call */
#define OWNER(c) (c + 1)
#define RIDA(c) (c * 8 + 1)    /* the acquire call (and its confirmation) */
#define RIDR(c) (c * 8 + 2)    /* the final release */
#define RIDL(c) (c * 8 + 3)    /* the post-loss release-all */
#define RIDE(c) (c * 8 + 4)    /* the re-entry */
#define RIDER(c) (c * 8 + 5)   /* the release of the re-entry */

/* three request slots per client: 0 the hold's serialized queue (acquire
 * attempts, confirmation, re-entry, releases), 1 the watchdog's renewal,
 * 2 fire-and-forget calls (cancel, and the pre-fix post-loss release) */
#define NS (N * 3)
#define S0(c) (c * 3)
#define S1(c) (c * 3 + 1)
#define S2(c) (c * 3 + 2)

byte now;

/* ---- Redis ---- */
bit lk;                /* the lock exists (a hash, or take.lua's string: lkTaken) */
bit foreign;           /* the lock key holds data holdfast did not write */
byte lkOwner, lkCount, lkRid, lkTok, lkExp;
bit lkC;               /* '@c': hand-off unconfirmed */
bit lkTaken;           /* the lock is the string a try's fast path wrote (take.lua): its last release
                          (release-all.lua sent the string; Redlock's release-taken.lua) frees it in one
                          GET, without a hand-off; anything that needs more
                          turns it into the hash first (_lock-state.lua's hashLock) */
byte fence;
byte q[N]; byte qlen;  /* queue: client indices (request id RIDA(c)) */
bit wE[N]; byte wExp[N]; /* waiter table entry of RIDA(c) and its expiresAt */
byte qExp;             /* TTL of the queue and waiter-table keys */

/* ---- requests ---- */
byte sKind[NS], sMode[NS], sRid[NS], sSt[NS], sAt[NS], sInv[NS];
byte rS[NS], rV[NS], rSb[NS], rC[NS];
bit sResent[NS];
byte sLate[NS];        /* ticks of delay this request met */

/* ---- pub/sub: per-client FIFO of messages ---- */
byte mK[N * MQ], mW[N * MQ], mT[N * MQ], mS[N * MQ], mAt[N * MQ];
byte mN[N];

/* ---- clients ---- */
byte ph[N], md[N];
bit joined[N], woken[N], hoff[N];
byte hTok[N], hSh[N], wakeAt[N], lastBusy[N], sb[N];
byte pauseU[N];
bit inSec[N], ended[N], lostR[N], fromH[N], confPend[N], confFly[N], relAllPend[N];
bit excused[N], reFly[N], closedC[N];
byte dl[N], tok[N], secEnd[N], cnt[N], asked[N];
byte maxTok;

/* ---- fault budgets ---- */
byte bLoss = LOSS, bDelay = DELAY, bMsgLoss = MSGLOSS, bMsgDelay = MSGDELAY;
byte bPause = PAUSE, bGiveUp = GIVEUP, bClose = CLOSE, bRenew = RENEW, bReenter = REENTER;

#define RUN(c) (now >= pauseU[c])

/* the stale hand-off guard: a hand-off older than the last busy attempt is news of a claim already gone */
#if defined(PREFIX) || defined(NOGUARD)
#define FRESH(c) 1
#else
#define FRESH(c) (hSh[c] >= sb[c])
#endif

/* (5): every write to the lock key goes through here */
#define LKWRITE assert(!foreign)

inline lkDel() {
  LKWRITE; lk = 0; lkOwner = 0; lkCount = 0; lkRid = 0; lkTok = 0; lkExp = 0; lkC = 0; lkTaken = 0
}

inline lkSet(c, r, t, unconfirmed, exp) {
  LKWRITE; lk = 1; lkOwner = OWNER(c); lkCount = 1; lkRid = r; lkTok = t; lkC = unconfirmed; lkExp = exp; lkTaken = 0
}

/* keys past their TTL are gone for every script */
inline expireKeys() {
  if
  :: lk && now >= lkExp -> lk = 0; lkOwner = 0; lkCount = 0; lkRid = 0; lkTok = 0; lkExp = 0; lkC = 0; lkTaken = 0
  :: else -> skip
  fi;
  if
  :: qExp > 0 && now >= qExp ->
     qlen = 0; j = 0;
     do :: j < N -> wE[j] = 0; q[j] = 0; j++ :: else -> break od;
     qExp = 0
  :: else -> skip
  fi
}

inline queueGoneIfEmpty() {
  if
  :: qlen == 0 -> j = 0; do :: j < N -> wE[j] = 0; j++ :: else -> break od; qExp = 0
  :: else -> skip
  fi
}

/* publish.lua: to every client whose waiter listens on the channel */
inline publish(kind, w, t) {
  j = 0;
  do
  :: j < N ->
     if
     :: joined[j] ->
        assert(mN[j] < MQ);
        mK[j * MQ + mN[j]] = kind; mW[j * MQ + mN[j]] = w; mT[j * MQ + mN[j]] = t;
        mS[j * MQ + mN[j]] = now; mAt[j * MQ + mN[j]] = now; mN[j]++
     :: else -> skip
     fi;
     j++
  :: else -> break
  od
}

/* _handoff.lua#handoff: the first live waiter gets an unconfirmed claim */
inline handoff(res) {
  res = 0;
  popped = 0;
  do
  :: qlen == 0 ->
     if :: popped -> queueGoneIfEmpty(); printf("@script _handoff.lua#none-left\n") :: else -> printf("@script _handoff.lua#none\n") fi;
     break
  :: qlen > 0 ->
     w = q[0]; j = 0;
     do :: j + 1 < qlen -> q[j] = q[j + 1]; j++ :: else -> break od;
     qlen--; q[qlen] = 0;
     popped = 1;
     if
     :: wE[w] && wExp[w] > now ->
        printf("@script _handoff.lua#handed\n");
        wE[w] = 0;
        fence++;
        lkSet(w, RIDA(w), fence, 1, now + C);
        publish(MSG_H, w, fence);
        res = w + 1;
        if :: qlen == 0 -> queueGoneIfEmpty() :: else -> skip fi;
        break
     :: else -> wE[w] = 0; printf("@script _handoff.lua#expired-entry\n")
     fi
  od
}

/* acquire.lua#enqueue */
inline enqueue(c, r, m, retry) {
  if
  :: m == M_JOIN ->
     printf("@script acquire.lua#enqueue-join\n");
     if
     :: !wE[c] ->
        q[qlen] = c; qlen++; printf("@script _queue-entry.lua#new\n")
     :: else -> skip
     fi;
     wE[c] = 1; wExp[c] = now + retry + G;
     if :: qExp < now + retry + G -> qExp = now + retry + G :: else -> skip fi
  :: else -> skip
  fi;
  rs = R_BUSY; rv = retry; rsb = now
}

inline extendAtLeast() {
  if :: lkExp < now + L -> lkExp = now + L :: else -> skip fi
}

inline freshGrant(c, r) {
  fence++;
  lkSet(c, r, fence, 0, now + L);
  rs = R_GRANTED; rv = fence; rc = 1
}

inline acquireScript(c, r, m) {
  expireKeys();
  if
  :: foreign ->
#ifdef FOREIGN_UNGUARDED
     /* the script before foreign data was refused: a hash without the token field counted as free */
     foreign = 1;
     freshGrant(c, r)
#else
     rs = R_CONFLICT; printf("@script acquire.lua#foreign\n")
#endif
  :: !foreign && m == M_TRY && !lk && qlen == 0 ->
     freshGrant(c, r); lkTaken = 1; printf("@script acquire.lua#try-free\n")
  :: else ->
     if
     :: lk && lkOwner == OWNER(c) ->
        if
        :: lkRid == r && lkC ->
           LKWRITE; lkC = 0; lkExp = now + L; printf("@script acquire.lua#confirm\n")
        :: lkRid == r && !lkC ->
           LKWRITE; extendAtLeast(); printf("@script acquire.lua#resend\n")
        :: lkRid != r ->
           /* a second hold needs the hash (its count) */
           if :: lkTaken -> LKWRITE; lkTaken = 0; printf("@script _lock-state.lua#to-hash\n") :: else -> skip fi;
           LKWRITE; lkCount++; lkRid = r; extendAtLeast(); printf("@script acquire.lua#reenter\n")
        fi;
        rs = R_GRANTED; rv = lkTok; rc = lkCount
     :: else ->
        if
        :: m == M_REENTER && lk -> rs = R_OTHER; printf("@script acquire.lua#reenter-other\n")
        :: m == M_REENTER && !lk -> rs = R_GONE; printf("@script acquire.lua#reenter-gone\n")
        :: m != M_REENTER && lk ->
           /* whoever waits needs the holder's release to see it: a string lock becomes the hash first */
#ifndef NOCONVERT
           if :: lkTaken -> LKWRITE; lkTaken = 0; printf("@script _lock-state.lua#to-hash\n") :: else -> skip fi;
#endif
           enqueue(c, r, m, lkExp - now); printf("@script acquire.lua#busy\n")
        :: m != M_REENTER && !lk ->
           if
           :: qlen > 0 && q[0] != c ->
              printf("@script acquire.lua#free-queued\n");
              handoff(h);
              if
              :: h == c + 1 ->
                 LKWRITE; lkC = 0; lkExp = now + L; printf("@script acquire.lua#handoff-self\n");
                 rs = R_GRANTED; rv = lkTok; rc = 1
              :: h != 0 && h != c + 1 -> enqueue(c, r, m, C); printf("@script acquire.lua#handoff-other\n")
              :: h == 0 -> freshGrant(c, r); printf("@script acquire.lua#free\n")
              fi
           :: qlen > 0 && q[0] == c ->
              printf("@script acquire.lua#head-self\n");
              j = 0;
              do :: j + 1 < qlen -> q[j] = q[j + 1]; j++ :: else -> break od;
              qlen--; q[qlen] = 0; wE[c] = 0; queueGoneIfEmpty();
              freshGrant(c, r); printf("@script acquire.lua#free\n")
           :: qlen == 0 -> freshGrant(c, r); printf("@script acquire.lua#free\n")
           fi
        fi
     fi
  fi
}

inline releaseScript(c, r, all) {
  expireKeys();
  if
  :: foreign -> rs = R_OTHER; printf("@script release.lua#taken\n")
  :: !foreign && lk && lkOwner == OWNER(c) && lkRid == r ->
     rs = R_OK; rv = lkCount; printf("@script release.lua#resend\n")
  :: !foreign && lk && lkOwner == OWNER(c) && lkRid != r && lkCount > 1 && !all ->
     LKWRITE; lkCount--; lkRid = r; rs = R_OK; rv = lkCount; printf("@script release.lua#one-of-many\n")
  :: !foreign && lk && lkOwner == OWNER(c) && lkRid != r && (lkCount == 1 || all) ->
     printf("@script release.lua#fast-free @script release.lua#last\n");
     /* release-all.lua's string path frees take.lua's string lock without a hand-off: sound only
        if a string lock means nobody is queued */
     assert(!lkTaken || qlen == 0);
     lkDel();
     if
     /* release.lua publishes 'f' (Redlock's waiters, which never queue, wake on it);
        release-all.lua, the last release of a Lock, does not */
     :: qlen == 0 -> if :: publish(MSG_F, 0, 0) :: skip fi; printf("@script release.lua#fast-free-nobody\n")
     :: else ->
        handoff(h);
        if :: h == 0 -> publish(MSG_F, 0, 0); printf("@script release.lua#nobody\n") :: else -> skip fi
     fi;
     rs = R_OK; rv = 0; printf("@script release.lua#freed\n")
  :: !foreign && lk && lkOwner != OWNER(c) -> rs = R_OTHER; printf("@script release.lua#taken\n")
  :: !foreign && !lk -> rs = R_GONE; printf("@script release.lua#gone\n")
  fi
}

inline cancelScript(c, r) {
  expireKeys();
  /* LREM + HDEL of our queue entry */
  j = 0; k = 0;
  do
  :: j < qlen -> if :: q[j] != c -> q[k] = q[j]; k++ :: else -> skip fi; j++
  :: else -> break
  od;
  j = k; do :: j < qlen -> q[j] = 0; j++ :: else -> break od;
  qlen = k; wE[c] = 0; queueGoneIfEmpty();
  if
  :: foreign || !lk || lkOwner != OWNER(c) || lkRid != r -> rs = R_OK; rv = 0; printf("@script cancel.lua#nothing\n")
  :: !foreign && lk && lkOwner == OWNER(c) && lkRid == r && lkCount > 1 ->
     LKWRITE; lkCount--; lkRid = 0; rs = R_OK; rv = 1; printf("@script cancel.lua#undo-reentry\n")
  :: !foreign && lk && lkOwner == OWNER(c) && lkRid == r && lkCount == 1 ->
     printf("@script cancel.lua#undo-grant\n");
     lkDel();
     handoff(h);
     if :: h == 0 -> publish(MSG_F, 0, 0) :: else -> skip fi;
     rs = R_OK; rv = 1
  fi
}

inline renewScript(c) {
  expireKeys();
  if
  :: !foreign && lk && lkOwner == OWNER(c) -> LKWRITE; lkExp = now + L; rs = R_OK; printf("@script renew.lua#renewed @script extend.lua#extended\n")
  :: foreign || (lk && lkOwner != OWNER(c)) -> rs = R_OTHER; printf("@script renew.lua#taken @script extend.lua#taken\n")
  :: !foreign && !lk -> rs = R_GONE; printf("@script renew.lua#gone @script extend.lua#gone\n")
  fi
}

/* (3) the server never counts more holds than the owner asked for */
#define CHECK_COUNT assert(!lk || lkCount <= asked[lkOwner - 1])

/* (1): nobody else believes it holds the lock */
inline checkExcl(c) {
  j = 0;
  do
  :: j < N -> assert(j == c || !(inSec[j] && dl[j] > now)); j++
  :: else -> break
  od
}

/* the server applies a request; its reply may be lost (resent) or late */
inline apply(i, c) {
  rs = 0; rv = 0; rsb = 0; rc = 0;
  if
  :: sKind[i] == K_ACQ -> acquireScript(c, sRid[i], sMode[i])
  :: sKind[i] == K_REL -> releaseScript(c, sRid[i], 0)
  :: sKind[i] == K_RELALL -> releaseScript(c, sRid[i], 1)
  :: sKind[i] == K_CANCEL -> cancelScript(c, sRid[i])
  :: sKind[i] == K_RENEW -> renewScript(c)
  fi;
  CHECK_COUNT;
  printf("STEP %d %d apply %d %d %d %d %d\n", now, c, sKind[i], sMode[i], sRid[i], rs, rv);
  rS[i] = rs; rV[i] = rv; rSb[i] = rsb; rC[i] = rc;
  /* (1b) second half: the client's own release-all never frees a claim whose confirmation is pending */
  assert(!(sKind[i] == K_RELALL && rs == R_OK && rv == 0 && fromH[c] && (confPend[c] || confFly[c])));
  if
  :: sSt[i] = S_REPLIED; sAt[i] = now
  :: bLoss > 0 -> bLoss--; sResent[i] = 1; sAt[i] = now; /* lost reply: resent after reconnect */
     printf("STEP %d %d fault 1 0\n", now, c)
  :: bDelay > 0 -> bDelay--; sSt[i] = S_REPLIED; sAt[i] = now + 1; sLate[i]++;
     printf("STEP %d %d fault 2 0\n", now, c)
  fi
}

inline send(i, kind, m, r) {
  sKind[i] = kind; sMode[i] = m; sRid[i] = r; sSt[i] = S_SENT; sInv[i] = now; sResent[i] = 0; sLate[i] = 0;
  printf("STEP %d %d send %d %d %d\n", now, i / 3, kind, m, r);
  if
  :: sAt[i] = now
  :: bDelay > 0 -> bDelay--; sAt[i] = now + 1; sLate[i] = 1; printf("STEP %d %d fault 3 0\n", now, i / 3)
  fi
}

inline dispose(c) {
  joined[c] = 0; woken[c] = 0; hoff[c] = 0; mN[c] = 0
}

/* the hold's deadline passed: `lost`, then (expired) release every hold */
inline reportLost(c, byDeadline) {
  /* (1b) a hand-off start keeps its lease unless a fault hit it */
  assert(!(byDeadline && fromH[c] && (confPend[c] || confFly[c])) || excused[c]
         || (confFly[c] && (sLate[S0(c)] > 1 || sResent[S0(c)])));
  lostR[c] = 1; ended[c] = 1; inSec[c] = 0;
  printf("STEP %d %d lost %d 0\n", now, c, byDeadline);
  if
  :: byDeadline ->
#ifdef PREFIX
     /* @client lock-client.ts#markLost (pre-fix: sent at once) */
     assert(sSt[S2(c)] == S_IDLE);
     send(S2(c), K_RELALL, 0, RIDL(c))
#else
     /* @client lock-client.ts#markLost (queued on the hold) */
     relAllPend[c] = 1
#endif
  :: else -> skip
  fi
}

/* enter the section: (1) and (2) */
inline enter(c, t, d, viaHandoff) {
  ph[c] = P_SEC; inSec[c] = 1; dl[c] = d; tok[c] = t; fromH[c] = viaHandoff; confPend[c] = viaHandoff;
  cnt[c] = 1;
  printf("STEP %d %d enter %d %d %d\n", now, c, t, d, viaHandoff);
  dispose(c);
  assert(d > now);
  checkExcl(c);
  assert(t > maxTok);
  maxTok = t;
  if
  :: secEnd[c] = now
  :: secEnd[c] = now + 1
  :: secEnd[c] = now + L
  fi
}

/* a script's own reply arrived */
inline readSlot(i) {
  sSt[i] = S_IDLE
}

proctype Client(byte c) {
  byte j, k, w, h, popped, rs, rv, rsb, rc, ce, i;
  bit got;
  asked[c] = 1;
  do
  /* ---- the server applies this client's requests (whatever the client does) ---- */
  :: atomic { sSt[S0(c)] == S_SENT && now >= sAt[S0(c)] -> apply(S0(c), c) }
  :: atomic { sSt[S1(c)] == S_SENT && now >= sAt[S1(c)] -> apply(S1(c), c) }
  :: atomic { sSt[S2(c)] == S_SENT && now >= sAt[S2(c)] -> apply(S2(c), c) }
  /* fire-and-forget replies: nobody reads them */
  :: atomic { sSt[S2(c)] == S_REPLIED && now >= sAt[S2(c)] -> readSlot(S2(c)) }
  :: atomic { sSt[S0(c)] == S_REPLIED && now >= sAt[S0(c)] && sKind[S0(c)] == K_RELALL -> readSlot(S0(c)) }

  /* ---- faults ---- */
  :: atomic { bPause > 0 && ph[c] != P_DONE && RUN(c) ->
       bPause--; excused[c] = 1;
       if :: pauseU[c] = now + 1 :: pauseU[c] = now + 2 :: pauseU[c] = now + PMAX fi;
       printf("STEP %d %d pause %d 0\n", now, c, pauseU[c]) }

  /* ---- pub/sub (waiters.ts#onMessage): FIFO, may be lost or late ---- */
  :: atomic { RUN(c) && mN[c] > 0 && now >= mAt[c * MQ] ->
       got = 1;
       if
       :: skip
       :: bMsgLoss > 0 -> bMsgLoss--; got = 0; printf("STEP %d %d fault 4 0\n", now, c)
       :: bMsgDelay > 0 -> bMsgDelay--; got = 0;
          if :: mAt[c * MQ] = now + 1 :: mAt[c * MQ] = now + C + 1 fi;
          printf("STEP %d %d fault 5 %d\n", now, c, mAt[c * MQ])
       fi;
       if
       :: got -> printf("STEP %d %d message %d %d %d %d\n", now, c, mK[c * MQ], mW[c * MQ], mT[c * MQ], mS[c * MQ])
       :: else -> skip
       fi;
       if
       :: got || mAt[c * MQ] <= now ->
          if
          :: got && mK[c * MQ] == MSG_H && mW[c * MQ] == c ->
             /* @client waiter.ts#wake-handoff */
             hoff[c] = 1; hTok[c] = mT[c * MQ]; hSh[c] = mS[c * MQ]; woken[c] = 1
          :: got && mK[c * MQ] == MSG_H && mW[c * MQ] != c ->
             /* @client waiter.ts#wakeBy */
             if :: ph[c] == P_SLEEP && wakeAt[c] > now + C -> wakeAt[c] = now + C :: else -> skip fi
          :: got && mK[c * MQ] == MSG_F -> woken[c] = 1 /* @client waiter.ts#wake */
          :: else -> skip
          fi;
          j = 0;
          do
          :: j + 1 < mN[c] ->
             mK[c * MQ + j] = mK[c * MQ + j + 1]; mW[c * MQ + j] = mW[c * MQ + j + 1];
             mT[c * MQ + j] = mT[c * MQ + j + 1]; mS[c * MQ + j] = mS[c * MQ + j + 1];
             mAt[c * MQ + j] = mAt[c * MQ + j + 1]; j++
          :: else -> break
          od;
          mN[c]--;
          mK[c * MQ + mN[c]] = 0; mW[c * MQ + mN[c]] = 0; mT[c * MQ + mN[c]] = 0;
          mS[c * MQ + mN[c]] = 0; mAt[c * MQ + mN[c]] = 0
       :: else -> skip
       fi }

  /* ---- acquire loop (acquire.ts#acquireLoop) ---- */
  :: atomic { RUN(c) && ph[c] == P_START ->
       /* not listening yet: the first attempt is a plain try */
       md[c] = M_TRY; send(S0(c), K_ACQ, M_TRY, RIDA(c)); ph[c] = P_ATT }
  :: atomic { RUN(c) && ph[c] == P_ATT && sSt[S0(c)] == S_REPLIED && now >= sAt[S0(c)] ->
       readSlot(S0(c));
       if
       :: rS[S0(c)] == R_GRANTED && sInv[S0(c)] + L - M > now ->
          /* @client acquire.ts#granted */
          enter(c, rV[S0(c)], sInv[S0(c)] + L - M, 0)
       :: rS[S0(c)] == R_GRANTED && sInv[S0(c)] + L - M <= now ->
          /* @client acquire.ts#granted-expired (semantics 3): try again */
          send(S0(c), K_ACQ, md[c], RIDA(c))
       :: rS[S0(c)] == R_BUSY ->
          lastBusy[c] = sInv[S0(c)]; sb[c] = rSb[S0(c)];
          if
          :: !joined[c] ->
             /* @client acquire.ts#join: subscribe, then try again queued */
             joined[c] = 1; md[c] = M_JOIN; send(S0(c), K_ACQ, M_JOIN, RIDA(c))
          :: joined[c] -> wakeAt[c] = now + rV[S0(c)]; ph[c] = P_SLEEP; /* @client acquire.ts#sleep */
             printf("STEP %d %d sleep %d 0\n", now, c, wakeAt[c])
          fi
       :: rS[S0(c)] == R_CONFLICT -> dispose(c); ph[c] = P_DONE /* KeyConflictError */
       fi }
  :: atomic { RUN(c) && ph[c] == P_SLEEP && (woken[c] || now >= wakeAt[c]) ->
       printf("STEP %d %d wake %d %d\n", now, c, hoff[c], hSh[c]);
       woken[c] = 0;
       /* @client acquire.ts#takeHandoff */
       if
       :: hoff[c] && md[c] == M_JOIN && FRESH(c) ->
#ifdef PREFIX
          ce = lastBusy[c] + C - M;
#else
          /* lastBusyAt + max(0, min(S_h - S_b, now - lastBusyAt)) + claim - margin */
          if
          :: hSh[c] <= sb[c] -> ce = lastBusy[c] + C - M
          :: hSh[c] > sb[c] && hSh[c] - sb[c] <= now - lastBusy[c] -> ce = lastBusy[c] + (hSh[c] - sb[c]) + C - M
          :: hSh[c] > sb[c] && hSh[c] - sb[c] > now - lastBusy[c] -> ce = now + C - M
          fi;
#endif
          hoff[c] = 0;
          if
#ifdef PREFIX
          :: ce > now -> enter(c, hTok[c], ce, 1) /* more than 1 ms left */
          :: else -> send(S0(c), K_ACQ, M_JOIN, RIDA(c)); ph[c] = P_ATT
#else
          :: ce >= now + C / 2 -> enter(c, hTok[c], ce, 1) /* half the claim left */
          :: else -> send(S0(c), K_ACQ, M_JOIN, RIDA(c)); ph[c] = P_ATT /* confirm first */
#endif
          fi
       :: else -> hoff[c] = 0; send(S0(c), K_ACQ, md[c], RIDA(c)); ph[c] = P_ATT
       fi }
  /* give up while queued (abort signal, waitMs, or close()): cancel in the background */
  :: atomic { RUN(c) && ph[c] == P_SLEEP && bGiveUp > 0 && sSt[S2(c)] == S_IDLE ->
       bGiveUp--; dispose(c); printf("STEP %d %d giveup 0 0\n", now, c); send(S2(c), K_CANCEL, 0, RIDA(c)); ph[c] = P_DONE }

  /* ---- holding (lease-ops.ts, lock-client.ts) ---- */
  /* the deadline timer (deadlines.ts): lost before any other step */
  :: atomic { RUN(c) && ph[c] == P_SEC && inSec[c] && now >= dl[c] -> reportLost(c, 1) }
  /* confirmHandoff: queued on the hold at once, sent after this turn */
  :: atomic { RUN(c) && ph[c] == P_SEC && confPend[c] && sSt[S0(c)] == S_IDLE && (!inSec[c] || now < dl[c]) ->
       confPend[c] = 0;
       if
       :: !ended[c] -> send(S0(c), K_ACQ, M_REENTER, RIDA(c)); confFly[c] = 1
       :: else -> skip
       fi }
  :: atomic { RUN(c) && confFly[c] && sSt[S0(c)] == S_REPLIED && now >= sAt[S0(c)] && (!inSec[c] || now < dl[c]) ->
       readSlot(S0(c)); confFly[c] = 0;
       if
       :: sLate[S0(c)] > 1 || sResent[S0(c)] -> excused[c] = 1
       :: else -> skip
       fi;
       if
       :: rS[S0(c)] == R_GRANTED ->
          if
          :: !ended[c] && sInv[S0(c)] + L - M > dl[c] -> dl[c] = sInv[S0(c)] + L - M; checkExcl(c)
          :: else -> skip
          fi
       :: rS[S0(c)] != R_GRANTED ->
          if :: !ended[c] -> reportLost(c, 0) /* taken */ :: else -> skip fi
       fi }
  /* a nested withLock: one more hold, queued on the hold */
  :: atomic { RUN(c) && ph[c] == P_SEC && inSec[c] && now < dl[c] && bReenter > 0 && !confPend[c] && !confFly[c] &&
                 sSt[S0(c)] == S_IDLE && cnt[c] == 1 && !reFly[c] ->
       bReenter--; asked[c]++; reFly[c] = 1; send(S0(c), K_ACQ, M_REENTER, RIDE(c)) }
  :: atomic { RUN(c) && reFly[c] && sKind[S0(c)] == K_ACQ && sSt[S0(c)] == S_REPLIED && now >= sAt[S0(c)] &&
                 (!inSec[c] || now < dl[c]) ->
       readSlot(S0(c)); reFly[c] = 0;
       if
       :: rS[S0(c)] == R_GRANTED ->
          assert(rV[S0(c)] == tok[c]);
          cnt[c] = rC[S0(c)];
          if :: !ended[c] && sInv[S0(c)] + L - M > dl[c] -> dl[c] = sInv[S0(c)] + L - M; checkExcl(c) :: else -> skip fi;
          /* the nested section ends: release one hold */
          if
          :: !ended[c] -> send(S0(c), K_REL, 0, RIDER(c)); reFly[c] = 1
          :: else -> skip
          fi
       :: else -> asked[c]--; if :: !ended[c] -> reportLost(c, 0) :: else -> skip fi
       fi }
  :: atomic { RUN(c) && reFly[c] && sKind[S0(c)] == K_REL && sSt[S0(c)] == S_REPLIED && now >= sAt[S0(c)] &&
                 (!inSec[c] || now < dl[c]) ->
       readSlot(S0(c)); reFly[c] = 0;
       if
       :: rS[S0(c)] == R_OK -> cnt[c] = rV[S0(c)]; asked[c]--
       :: else -> if :: !ended[c] -> reportLost(c, 0) :: else -> skip fi
       fi }
  /* the watchdog renews (its own connection slot, not queued on the hold) */
  :: atomic { RUN(c) && ph[c] == P_SEC && inSec[c] && now < dl[c] && bRenew > 0 && sSt[S1(c)] == S_IDLE ->
       bRenew--; send(S1(c), K_RENEW, 0, 0) }
  :: atomic { RUN(c) && sSt[S1(c)] == S_REPLIED && now >= sAt[S1(c)] && (!inSec[c] || now < dl[c]) ->
       readSlot(S1(c));
       if
       :: rS[S1(c)] == R_OK ->
          if :: inSec[c] && sInv[S1(c)] + L - M > dl[c] -> dl[c] = sInv[S1(c)] + L - M; checkExcl(c) :: else -> skip fi
       :: else -> if :: inSec[c] -> reportLost(c, 0) :: else -> skip fi
       fi }
  /* close() while holding: lost ('closed'), nothing released, nothing more sent */
  :: atomic { RUN(c) && ph[c] == P_SEC && inSec[c] && now < dl[c] && bClose > 0 ->
       bClose--; closedC[c] = 1; confPend[c] = 0; printf("STEP %d %d close 0 0\n", now, c); reportLost(c, 0) }
  /* the section ends: release, queued behind the confirmation (and a re-entry) */
  :: atomic { RUN(c) && ph[c] == P_SEC && inSec[c] && now < dl[c] && now >= secEnd[c] && !confPend[c] && !confFly[c] &&
                 !reFly[c] && sSt[S0(c)] == S_IDLE ->
       inSec[c] = 0; printf("STEP %d %d leave 0 0\n", now, c); send(S0(c), K_REL, 0, RIDR(c)) }
  :: atomic { RUN(c) && ph[c] == P_SEC && !inSec[c] && !ended[c] && sKind[S0(c)] == K_REL && !reFly[c] &&
                 sSt[S0(c)] == S_REPLIED && now >= sAt[S0(c)] ->
       readSlot(S0(c)); ended[c] = 1;
       /* a resent release finding the lock gone or handed on is our own (lease-ops.ts#releaseLease) */
       if
       :: rS[S0(c)] == R_OK -> skip
       :: rS[S0(c)] != R_OK && sResent[S0(c)] && (rS[S0(c)] == R_GONE || now < dl[c]) -> skip
       :: else -> lostR[c] = 1
       fi }
#ifndef PREFIX
  /* the post-loss release, queued on the hold (lock-client.ts#markLost: h.serialize):
   * behind the confirmation and a re-entry; a renewal in flight is not waited for
   * (renew.lua only extends a lock its owner still holds) */
  :: atomic { RUN(c) && relAllPend[c] && !confPend[c] && !confFly[c] && !reFly[c] &&
                 sSt[S0(c)] == S_IDLE && !closedC[c] ->
       relAllPend[c] = 0; send(S0(c), K_RELALL, 0, RIDL(c)) }
#endif
  /* wound down */
  :: atomic { ph[c] == P_SEC && ended[c] && !confPend[c] && !relAllPend[c] && !reFly[c] &&
                 sSt[S0(c)] == S_IDLE && sSt[S1(c)] == S_IDLE && sSt[S2(c)] == S_IDLE ->
       confFly[c] = 0; ph[c] = P_DONE }
  :: atomic { ph[c] == P_DONE && sSt[S0(c)] == S_IDLE && sSt[S1(c)] == S_IDLE && sSt[S2(c)] == S_IDLE -> break }
  od
}

#ifdef FOREIGN
active proctype Foreign() {
  byte t;
  if :: t = 0 :: t = 3 :: t = 7 fi;
  (now >= t);
  atomic { lk = 0; lkOwner = 0; lkCount = 0; lkRid = 0; lkTok = 0; lkExp = 0; lkC = 0; lkTaken = 0; foreign = 1 }
}
#endif

#if N == 1
#define ALLDONE (ph[0] == P_DONE)
#elif N == 2
#define ALLDONE (ph[0] == P_DONE && ph[1] == P_DONE)
#else
#define ALLDONE (ph[0] == P_DONE && ph[1] == P_DONE && ph[2] == P_DONE)
#endif

active proctype Clock() {
  byte c;
  do
  :: atomic { timeout && now < MAXT -> now++ }
  :: atomic { timeout && now >= MAXT ->
       /* (4): nobody is left waiting */
       c = 0;
       do :: c < N -> assert(ph[c] == P_DONE); c++ :: else -> break od;
       break }
  od
}

init {
  byte c = 0;
  atomic {
    do :: c < N -> run Client(c); c++ :: else -> break od
  }
}
