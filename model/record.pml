/*
 * record.pml: the lambdaidem record protocol for one key, checked with spin.
 *
 * The protocol as shared/DESIGN.md §2.5, §3 and §4 and issue 22 describe it:
 * one gate predicate (may the owner of this record still be running, or its
 * external effect still land?) asked by every path; whether the owner renews
 * recorded in the record at claim; an in-progress record never expiring while
 * its owner may run; UNKNOWN (and external) records without a TTL until
 * resolved; a new ClientRequestToken after a definite cancellation.
 *
 * Every transition names the Go function and the DynamoDB expression
 * constant (dynamostore/expressions.go, records_expr.go) it stands for.
 * model/README.md explains the actors, bounds and properties; every guard
 * is a G_* macro that model/mutate.sh switches off (-DMUT_<NAME>) to check
 * that spin then finds a counterexample.
 *
 * Time is in ticks. A process reads its own clock (true time + its skew,
 * |skew| <= SKEW) when it builds a request; the request is applied by
 * DynamoDB in a later atomic step, on the request's values, so any number
 * of other steps (and clock ticks) may fall between a request and its
 * application: a request may be in flight for as long as the schedule
 * likes, and is applied even if its sender stops meanwhile.
 */

/* ---- bounds (defaults; model/check.sh sets them per bound: small, full, renewals) */
#ifndef NATT
#define NATT 3          /* attempts: invocations of lambdaidem.Do on the key */
#endif
#ifndef TMAX
#define TMAX 9          /* the clock stops here (the final retry jumps past it) */
#endif
#ifndef FAULTS
#define FAULTS 2        /* store faults in all: errors, lost responses, conflicts */
#endif
#ifndef OPERATOR
#define OPERATOR 1      /* operator actions (resolve --done/--not-done, forget) */
#endif
#ifndef ROUNDS
#define ROUNDS 2        /* maxRounds (do.go: 4) */
#endif
#ifndef RENEWALS
#define RENEWALS 2      /* renewal tries per attempt */
#endif
#ifndef RESENDS
#define RESENDS 2       /* commit resends after a cancellation (FinishTimeout) */
#endif
#ifndef OPTIMISTIC
#define OPTIMISTIC 1    /* 1: attempts 2.. may run in optimistic mode */
#endif
#ifndef RENEWS
#define RENEWS 1        /* 0: no attempt renews (under SIM a renewal falls at the Go renewer's timer ticks) */
#endif
#ifndef LATE
#define LATE 1          /* 0: no late writes (model/replay's samples; its class "lease lost" plays them) */
#endif
#ifndef REUSE
#define REUSE 1         /* 1: the last attempt may carry another intent (key reuse) */
#endif

/* ---- the time constants (ticks) ------------------------------------------ */
#ifndef DL
#define DL      1       /* the invocation's deadline, after its start */
#endif
#define MARGIN  2       /* Options.LeaseMargin (> 2*SKEW, docs/guarantees.md) */
#define LEN     (DL+MARGIN) /* the lease: deadline + margin */
#define SKEW    1       /* bound on any actor's clock error */
#ifndef MAXRUN
#define MAXRUN  3       /* Options.MaxRunTime (the managed bound: >= 2 leases) */
#endif
#ifndef RH
#define RH      2       /* Options.RetryHorizon (short: records expire in the model) */
#endif
#ifndef LATES
#define LATES   1       /* late writes in flight at once (1 or 2) */
#endif
#define TFINAL  (TMAX+LEN+2*MAXRUN+MARGIN+2) /* the final retry: every window has passed */
#define INF     255     /* no TTL */

/* the hold adds LeaseMargin to MaxRunTime for clock skew, as the lease does (findings F2;
 * lambdaidem.OwnerHold since 953a3fc) */
#ifdef MUT_HOLD_SLACK
#define WSLACK 0
#else
#define WSLACK MARGIN
#endif

/* the record's status */
#define ABSENT    0
#define INPROG    1
#define COMPLETED 2
#define UNKNOWN   3

typedef Rec {
	byte  st;       /* #status; ABSENT: no item under the key */
	byte  tok;      /* #attempt: the owner's token (fencing) */
	byte  lease;    /* #lease (in_progress_expiration) */
	byte  exp;      /* #expiration: the TTL; INF: none */
	bit   ext;      /* #external: BeginExternal's mark */
	byte  renewed;  /* #renewedAt: the owner's last renewal (its clock); 0: none */
	byte  hold;     /* #holdUntil: until when the owner may run (OwnerHold), written at claim and renewal */
	byte  fp;       /* #validation: the intent (fingerprint) */
	byte  out       /* #data: whose outcome bytes (see OUT_*) */
};

#define COPY(d, s) d.st = s.st; d.tok = s.tok; d.lease = s.lease; d.exp = s.exp; d.ext = s.ext; \
	d.renewed = s.renewed; d.hold = s.hold; d.fp = s.fp; d.out = s.out
#define CLEAR(d) d.st = ABSENT; d.tok = 0; d.lease = 0; d.exp = 0; d.ext = 0; d.renewed = 0; \
	d.hold = 0; d.fp = 0; d.out = 0

Rec r;                  /* the item in the table */

/* the record as it is after a write, a read or a TTL deletion, printed on
 * the event's EV line (" st=.. tok=.. lease=.. exp=.. ext=.. ren=.. hold=..
 * fp=.. out=..", written out in each printf: spin takes one string): model/replay
 * compares the stored item with it. A printf changes no state */
#define RECA r.st, r.tok, r.lease, r.exp, r.ext, r.renewed, r.hold, r.fp, r.out
byte now = 2;           /* true time (starts above SKEW: clocks never go below 1) */

/* ---- actors' parameters (chosen by init) --------------------------------- */
#define CF  0           /* Mode ClaimFirst */
#define OPT 1           /* Mode Optimistic */
#define OPID  (NATT+1)  /* the operator's process index */
#define FINAL (NATT+2)  /* the final retry's index */
#define N     (NATT+3)
bit  mode[N];
bit  renews[N];         /* Options.Renew resolved: this invocation renews */
byte fp[N];             /* the call's intent */
byte skew[N];           /* clock = now + skew - SKEW */
#define clk(p) (now + skew[p] - SKEW)

/* ---- ghosts: what the properties are checked on ------------------------- */
byte faults = FAULTS;   /* the fault budget left */
byte deadline[N];       /* the invocation's deadline (true time) */
byte lastContact[N];    /* an owner's claim or last renewal (true time) */
bit  inHandler[N];      /* between its claim and its handler's return */
bit  dispatchedBy[N];
bit  leaked[N];         /* the handler returned, its external call still to be made (a goroutine) */
byte holder;            /* the token of the claim the record holds (0: none) */
byte opCommits;         /* commits of staged writes in this operation: (a) */
bit  dispatchOK = 1;    /* an external dispatch is allowed now: (b) */
byte inflight;          /* external calls sent and not yet landed or lost */
byte landed;            /* external calls that reached the downstream system */
byte storedFp[3*N];      /* outcome -> the intent it was stored for: (c) */
byte ntok;              /* the last attempt token handed out */
byte finished;          /* attempts and operator that ended */
bit  progressed;        /* the final retry got an answer: (e) */

bit  opRead;             /* the operator has read the record */

/*
 * Reachability goals (model/goals.sh): -DGOAL=<id> turns the goal into an
 * assertion that the model must violate at its bound; a bound that can no
 * longer reach a goal proves less than it says (a vacuous property).
 */
#define G_SECOND_CLAIM     1   /* a claim applied while another attempt is in its handler */
#define G_RESOLVE_DONE     2   /* the operator's resolve --done applied */
#define G_RECONCILE_FINAL  3   /* the final retry reconciles (done or not done) */
#define G_LATE_AFTER_READ  4   /* a late renewal applied after the operator's read */
#define G_MARK_UNKNOWN     5   /* MarkUnknown applied */
#define G_TAKEOVER         6   /* a claim applied over an INPROGRESS record */
#define G_OPT_REFUSED      7   /* an optimistic commit refused */
#define G_FENCED_OUT       8   /* an owner's commit of staged writes refused by the fence (a late one: a
                                * live owner is never fenced out, the hold sees to it) */
#define G_TWO_LATE         9   /* two late writes in flight at once */
#define G_NOTDONE_REDISPATCH 10 /* a dispatch after a "not done" released the record */
#define G_TTL_INPROG      11   /* TTL deletion of an INPROGRESS record */
#define G_RENEW_CAPPED    12   /* a renewal capped at MaxRunTime applied */
#define G_RECONCILE_DONE  13   /* a reconcile function answers "done" */
#define G_RECONCILE_NOTDONE 14 /* a reconcile function answers "not done" */
#define G_RECONCILE_CANNOTTELL 15 /* a reconcile function cannot tell */
#ifdef GOAL
bit goalReached;
#ifdef GOAL_AT_END
/* model/replay's aimed schedules: a whole run that reached the goal (the
 * assertion at the end of init) */
#define REACH(id, cond) if :: GOAL == id && (cond) -> goalReached = 1 :: else fi
#else
#define REACH(id, cond) if :: GOAL == id && (cond) -> goalReached = 1; assert(!goalReached) :: else fi
#endif
#else
#define REACH(id, cond) skip
#endif

/* outcomes: attempt i's handler OUT(i); its reconcile function REC(i); the operator */
#define OUT(i)  (i)
#define REC(i)  (i+N)
#define OPOUT   (2*N)

/*
 * Assumption 1 (Managed Instances): an owner silent for MaxRunTime has
 * stopped: an owner that renews takes no step later than MAXRUN after its
 * claim or its last renewal that got through. An owner that does not renew
 * runs where the platform stops it at its deadline (standard Lambda). A
 * crash may stop it at any step before.
 *
 * Assumption 2 (every environment): a handler that has returned has no call
 * of its own still in flight: once its handler returns (and op.abandon or
 * op.commit runs), an attempt starts no external call. Standard Lambda needs
 * it already (a goroutine left behind is frozen and resumes at any later
 * invocation of the environment, which no lease covers); Call.Reconcile's
 * contract says so. -DLEAK_AFTER_RETURN drops it: a renewing owner's handler
 * may fail and leave its call to a goroutine (leaked), and spin shows why
 * the assumption is needed (findings F3: an UNKNOWN record with no renewal
 * on record is reconciled "not done" while the goroutine still calls).
 */
#ifdef MUT_ASSUME_RETURNED
#define LEAK_AFTER_RETURN   /* model/mutate.sh: the assumption off */
#endif
#if defined(LEAK_AFTER_RETURN)
#define LEAKS 1
#elif defined(LEAK_AFTER_RENEWAL)
/* the narrower variant: only an owner with a renewal of its own on record
 * leaks; OwnerMayRun's UNKNOWN hold (HELD_UNKNOWN) covers exactly that */
#define LEAKS (r.tok == tok && r.renewed != 0)
#endif
#define alive(p) (p == FINAL || (renews[p] -> (now <= lastContact[p] + MAXRUN) : (now <= deadline[p])))
/* may attempt p still start its external call? (b) In its handler, or from a
 * goroutine its handler left running (leaked) */
#define mayDispatch(p) (alive(p) && ((inHandler[p] && !dispatchedBy[p]) || leaked[p]))
#define noDispatcher (!mayDispatch(1) && !mayDispatch(2) && !mayDispatch(3) && !mayDispatch(FINAL))
/* a claim-first handler still running: (f) */
#define running(p) (inHandler[p] && alive(p))

/* (d) a stored outcome is never lost before its expiration (an operator's forget aside) */
#define OVERWRITE \
	if \
	:: r.st == COMPLETED -> assert(now + SKEW > r.exp); opCommits = 0; dispatchOK = 1 \
	:: else \
	fi

/* ---- the gate (lambdaidem/gate.go) --------------------------------------- */

/*
 * OwnerMayRun(rec, now): the owner may still be running, or its effect
 * still land: the record is INPROGRESS, or UNKNOWN with a renewal on record,
 * and now is not past HoldUntil (the later of the lease and the recorded
 * hold). dynamostore says it as the expression `held`.
 */
#ifdef MUT_HELD_LEASE
#define leaseHeld(x, c) 0
#else
#define leaseHeld(x, c) (x.lease >= c)
#endif
#ifdef MUT_HELD_HOLD
#define holdHeld(x, c) 0
#else
#define holdHeld(x, c) (x.hold >= c)
#endif
#ifdef MUT_HELD_UNKNOWN
#define unknownHeld(x) 0
#else
/* an UNKNOWN record with a renewal on record (#renewedAt) is held, as
 * OwnerMayRun's `case StatusUnknown: if rec.RenewedAt.IsZero()` says. Under
 * the assumption that a handler that has returned has no call of its own in
 * flight (see alive below) nothing of its owner can still call once it is
 * UNKNOWN; -DLEAK_AFTER_RETURN drops the assumption (findings F3) */
#define unknownHeld(x) (x.st == UNKNOWN && x.renewed != 0)
#endif
#define ownerMayRun(x, c) ((x.st == INPROG || unknownHeld(x)) && (leaseHeld(x, c) || holdHeld(x, c)))

/* takeable: INPROGRESS, no external mark, not held (VerdictTakeOver, or VerdictExpired past its TTL) */
#ifdef MUT_TAKE_EXTERNAL
#define noExternal(x) 1
#else
#define noExternal(x) (!x.ext)
#endif
#define takeable(x, c) (x.st == INPROG && noExternal(x) && !ownerMayRun(x, c))
#define expired(x, c) (x.exp < c)

/* Judge's VerdictReconcile: settleable by a reconcile function or an operator */
#define settleable(x, c) (!ownerMayRun(x, c) && (x.st == UNKNOWN || (x.st == INPROG && x.ext)))

/* Judge(rec, now): the verdict */
#define V_ABSENT    0
#define V_EXPIRED   1
#define V_TAKEOVER  2
#define V_REPLAY    3
#define V_HELD      4
#define V_RECONCILE 5
#ifdef MUT_RECONCILE_HELD
#define heldFirst(x, c) (ownerMayRun(x, c) && !(x.st == UNKNOWN || x.ext))
#else
#define heldFirst(x, c) ownerMayRun(x, c)
#endif
#define judge(x, c) (x.st == ABSENT -> V_ABSENT : (heldFirst(x, c) -> V_HELD : \
	(x.st == COMPLETED -> (expired(x, c) -> V_EXPIRED : V_REPLAY) : \
	(x.st == UNKNOWN -> V_RECONCILE : (x.ext -> V_RECONCILE : (expired(x, c) -> V_EXPIRED : V_TAKEOVER))))))

/* OwnerHold(lease, last, renews, MaxRunTime, LeaseMargin) and ExpiryFor(now, hold, horizon) */
#define ownerHold(l, last, rn) (rn -> (l > last + MAXRUN + WSLACK -> l : last + MAXRUN + WSLACK) : l)
#ifdef MUT_EXPIRY_HOLD
#define expiryFor(c, h, hz) (c + hz)
#else
#define expiryFor(c, h, hz) (c + hz > h + 1 -> c + hz : h + 1)
#endif

/*
 * A late write: DynamoDB applies a write whose client gave up on it (a
 * timeout: the client sees an error) at any later time, whatever its
 * sender does meanwhile. One at a time; renewals and commits.
 */
#define L_NONE   0
#define L_RENEW  1
#define L_COMMIT 2
/* what is in flight, in LATES slots (two late writes: findings of issue 33,
 * the operator's UnchangedCondition without hold_until and renewed_at) */
byte late[2];
byte lme[2], ltok[2], lc[2], lwant[2], lhold[2], lexp[2], lout[2], lsent[2]; bit lext[2], lclaim[2];
/* a free slot, if any */
#define lateFree (late[0] == L_NONE || (LATES > 1 && late[1] == L_NONE))
#define lslot (late[0] == L_NONE -> 0 : 1)

/* ---- faults --------------------------------------------------------------- */
#define F_NONE      0   /* answered */
#define F_ERR       1   /* refused before applying (throttling, 5xx on every try): an error */
#define F_LOSTERR   2   /* applied, its answer lost on every try: an error */
#define F_LOSTRETRY 3   /* applied, its answer lost; the SDK's resend is evaluated again */
#define F_CONFLICT  4   /* a transaction cancelled for TransactionConflict: nothing applied */
#define F_LATE      5   /* the client gave up (an error); DynamoDB applies it later (late) */

inline pickFault(f, me) {
	if
	:: f = F_NONE
	:: me != FINAL && faults > 0 -> faults--; f = F_ERR
	:: me != FINAL && faults > 0 -> faults--; f = F_LOSTERR
	:: me != FINAL && faults > 0 -> faults--; f = F_LOSTRETRY
	fi
}

/* a refused condition returns the old item (ALL_OLD) or not: AWS leaves it open */
inline refused(cur, haveOld) {
	if
	:: COPY(cur, r); haveOld = 1
	:: haveOld = 0
	fi
}

/* the strongly consistent GetItem a refusal without an item falls back to (Store.current) */
inline readBack(cur, haveOld) {
	if
	:: !haveOld -> atomic { COPY(cur, r); printf("EV %d get st=%d tok=%d lease=%d exp=%d ext=%d ren=%d hold=%d fp=%d out=%d\n", me, RECA) }
	:: else
	fi
}

/* ---- the store's writes: each evaluates its condition on r and applies --- */

/* Store.claimOrTakeOver: UpdateItem claimCondition, claimSet/claimUpdate (#renewedAt kept) */
#ifdef MUT_CLAIM_LIVE
#define claimOK(c) (r.st == ABSENT || takeable(r, c))
#else
#define claimOK(c) (r.st == ABSENT || (!expired(r, c) && takeable(r, c)))
#endif
#define NOT_RUNNING_BUT(p) assert((!running(1) || p == 1) && (!running(2) || p == 2) && (!running(3) || p == 3))
inline claimUpdate(pme, ptok, pc, plea, phold, pexp, pok) {
	if
	:: claimOK(pc) ->
		NOT_RUNNING_BUT(pme);   /* (f) */
		REACH(G_SECOND_CLAIM, (inHandler[1] && pme != 1) || (inHandler[2] && pme != 2) || (inHandler[3] && pme != 3));
		REACH(G_TAKEOVER, r.st == INPROG);
		r.st = INPROG; r.tok = ptok; r.lease = plea; r.hold = phold; r.exp = pexp; r.ext = 0;
		r.fp = fp[pme]; r.out = 0; holder = ptok; pok = 1
	:: else -> pok = 0
	fi
}

/* Store.claimExpired: PutItem replaceCondition (a fresh item: #renewedAt dropped) */
#ifdef MUT_REPLACE
#define replaceOK(c) 1
#else
#define replaceOK(c) (r.st == ABSENT || (expired(r, c) && (r.st == COMPLETED || takeable(r, c))))
#endif
inline claimPut(pme, ptok, pc, plea, phold, pexp, pok) {
	if
	:: replaceOK(pc) ->
		NOT_RUNNING_BUT(pme);
		REACH(G_SECOND_CLAIM, (inHandler[1] && pme != 1) || (inHandler[2] && pme != 2) || (inHandler[3] && pme != 3));
		REACH(G_TAKEOVER, r.st == INPROG);
		OVERWRITE;
		r.st = INPROG; r.tok = ptok; r.lease = plea; r.hold = phold; r.exp = pexp; r.ext = 0;
		r.renewed = 0; r.fp = fp[pme]; r.out = 0; holder = ptok; pok = 1
	:: else -> pok = 0
	fi
}

/* fenceCondition: #attempt = :token AND #status IN (:inProgress, :unknown) */
#ifdef MUT_FENCE_TOKEN
#define fenceTok(t) 1
#else
#define fenceTok(t) (r.tok == t)
#endif
#ifdef MUT_FENCE_STATUS
#define fenced(t) (fenceTok(t) && r.st != ABSENT)
#else
#define fenced(t) (fenceTok(t) && (r.st == INPROG || r.st == UNKNOWN))
#endif
/* runningCondition: #attempt = :token AND #status = :inProgress */
#ifdef MUT_RUNNING_TOKEN
#define runningTok(t) 1
#else
#define runningTok(t) (r.tok == t)
#endif
#ifdef MUT_RUNNING_STATUS
#define runningOK(t) (runningTok(t) && r.st != ABSENT)
#else
#define runningOK(t) (runningTok(t) && r.st == INPROG)
#endif

/* Store.Release: DeleteItem fenceCondition; pnd: a reconcile function said "not done" */
inline release(ptok, pnd, pok) {
	if
	:: fenced(ptok) -> OVERWRITE; CLEAR(r); holder = 0; pok = 1;
		/* (b) a "not done" takes effect only while no earlier attempt could still call */
		if :: pnd -> assert(noDispatcher); dispatchOK = 1 :: else fi
	:: else -> pok = 0
	fi
}

/*
 * Store.Commit: PutItem, or the record's Put in TransactWriteItems, of the
 * completed item: fenceCondition; pclaim: optimisticCommitCondition. pfx:
 * staged writes ride along (property (a)).
 */
#ifdef MUT_OPT_EXPIRED
#define optFree(c) (r.st == ABSENT || expired(r, c))
#else
#define optFree(c) (r.st == ABSENT || (expired(r, c) && r.st == COMPLETED))
#endif
inline commitApply(pme, ptok, pc, pexp, po, pclaim, pfx, pok) {
	if
	:: (pclaim && (optFree(pc) || takeable(r, pc))) || (!pclaim && fenced(ptok)) ->
		if :: pclaim -> NOT_RUNNING_BUT(0); holder = ptok :: else fi;
		OVERWRITE;
		if
		:: pfx -> assert(holder == ptok);          /* (a) only the claim's holder commits */
			assert(opCommits == 0); opCommits++  /* (a) at most once per operation */
		:: else
		fi;
		r.st = COMPLETED; r.tok = ptok; r.exp = pexp; r.ext = 0; r.lease = 0; r.hold = 0;
		r.renewed = 0; r.fp = fp[pme]; r.out = po; storedFp[po] = fp[pme]; pok = 1
	:: else -> REACH(G_FENCED_OUT, !pclaim && pfx); pok = 0
	fi
}

/* Store.MarkExternal: UpdateItem runningCondition, markExternalUpdate (REMOVE #expiration) */
#ifdef MUT_EXTERNAL_TTL
#define externalExp(e) (e)
#else
#define externalExp(e) INF
#endif
inline markExternal(ptok, pok) {
	if
	:: runningOK(ptok) -> r.ext = 1; r.exp = externalExp(r.exp); pok = 1
	:: else -> pok = 0
	fi
}

/* Store.MarkUnknown: UpdateItem runningCondition, markUnknownUpdate (REMOVE #expiration) */
#ifdef MUT_UNKNOWN_TTL
#define unknownExp(c) (c + RH)
#else
#define unknownExp(c) INF
#endif
inline markUnknown(ptok, pc, pok) {
	if
	:: runningOK(ptok) -> r.st = UNKNOWN; r.exp = unknownExp(pc); pok = 1; REACH(G_MARK_UNKNOWN, 1)
	:: else -> pok = 0
	fi
}

/*
 * Store.Renew: UpdateItem renewCondition, renewUpdate (pext: renewExternalUpdate,
 * no expiration). renewUpdate also requires attribute_not_exists(#external):
 * without it a renewal that lands late puts a TTL back on an external record
 * (findings F1; -DMUT_RENEW_EXTERNAL).
 */
#ifdef MUT_RENEW_LEASE
#define renewLease(c) 1
#else
#define renewLease(c) (r.lease >= c)
#endif
#ifdef MUT_RENEW_EXTERNAL
#define renewExtOK(e) 1
#else
#define renewExtOK(e) (e || !r.ext)
#endif
/* renewCondition: #renewedAt <= :renewedAt, a renewal never moves the last
 * renewal (and the lease and hold written with it) back: one whose client
 * gave up and that DynamoDB applies after a later one would shorten the hold
 * of an owner that got the later renewal through (findings F4, 4ac93d9;
 * -DMUT_RENEW_MONOTONE). A lease comparison (#lease <= :lease) is not
 * enough: two renewals capped at MaxRunTime write the same lease and
 * different holds (the renewals bound finds that case at 9 ticks). */
#ifdef MUT_RENEW_MONOTONE
#define renewForward(pc) 1
#else
#define renewForward(pc) (r.renewed <= pc)
#endif
inline renew(pme, ptok, pc, pwant, phold, pexp, pext, psent, pok) {
	if
	:: runningOK(ptok) && renewLease(pc) && renewExtOK(pext) && renewForward(pc) ->
		REACH(G_RENEW_CAPPED, r.lease == pwant);
		r.lease = pwant; r.hold = phold; r.renewed = pc; pok = 1;
		/* a renewal that got through is a sign of life at its sending (a late one
		 * applied after a later one is no later sign) */
		if :: psent > lastContact[pme] -> lastContact[pme] = psent :: else fi;
		if :: pext -> r.exp = INF :: else -> r.exp = pexp fi
	:: else -> pok = 0
	fi
}

/*
 * One write with its faults. W1, inside the caller's atomic step (which
 * read the clock and built the request), picks the fault and applies the
 * write; W2 is what follows: on a lost answer the SDK's resend, evaluated
 * again in a later step, or an error. err: the caller got an error.
 */
#define W1(me, f, APPLY, code, err) \
	pickFault(f, me); \
	if \
	:: f == F_ERR -> err = 1 \
	:: else -> APPLY \
	fi; \
	printf("EV %d w %d f=%d ok=%d st=%d tok=%d lease=%d exp=%d ext=%d ren=%d hold=%d fp=%d out=%d\n", me, code, f, ok, RECA); SIMSTEP
#define W2(me, f, APPLY, code, err) \
	if \
	:: f == F_LOSTERR -> err = 1 \
	:: f == F_LOSTRETRY -> atomic { APPLY; printf("EV %d w %d resend ok=%d st=%d tok=%d lease=%d exp=%d ext=%d ren=%d hold=%d fp=%d out=%d\n", me, code, ok, RECA) } \
	:: else \
	fi

/*
 * -DSIM (model/replay's samples only): the clock ticks only after some
 * store write since the last tick (or once the attempts ended), so that
 * random simulation does not mostly stall the attempts until they stop.
 */
#ifdef SIM
byte nw, ntw;
#define SIMSTEP nw++
#define SIMTOCK ntw = nw;
#if RENEWS
#define SIMRENEW
#endif
#else
#define SIMSTEP skip
#define SIMTOCK
#endif
#ifdef SIMRENEW
#define SIMTICK (nw != ntw || finished >= NATT) && !renewBlocks(1) && !renewBlocks(2) && !renewBlocks(3) ->
/*
 * The Go renewer's timing (keepAlive, model/replay's Options: RenewFraction
 * 1/2, MaxRunTime MAXRUN, a tick a second): its timer fires at the first
 * tick at or after start + lease/2 (the lease the handler started with),
 * then at the first tick at or after each renewal + lease/2; at a firing it
 * renews if MaxRunTime is still ahead of its lease, else waits until the
 * lease ends and gives up. rdue: that tick on the owner's clock (0: no
 * renewer); runtil, rhung: the renewer's lease and hung; rin: in the
 * handler's loop. A renewing owner renews at the tick the timer fires (the
 * clock does not tick while a renewal is due, nor, once the owner left its
 * loop and until its handler returned, into a due one), never at another
 * step; renewals get no fault here (the Go renewer's retry timing is not
 * followed). At RENEWS=0 the samples' model is as it was (model/replay's
 * aimed classes that do not renew search it).
 */
byte rdue[N], runtil[N], rhung[N]; bit rin[N];
/* model/replay's aimed classes (goals of the samples' model only) */
#define G_RENEW_APPLIED   16   /* a renewal applied at the Go renewer's tick */
#define G_RENEW_REFUSED   17   /* a renewal refused: the lease lost at renewal */
#define renewEvery(l) ((l + 1) / 2)
#define writeDue(p, t) (rdue[p] != 0 && t >= rdue[p] && rhung[p] > runtil[p] && t <= runtil[p])
#define renewBlocks(p) (p <= NATT && rdue[p] != 0 && (rin[p] -> writeDue(p, clk(p)) : writeDue(p, clk(p) + 1)))
/* capped at MaxRunTime, the renewer gives up when the lease ends: at that
 * very tick Go's BeginExternal may or may not see it yet, so no mark then */
#define capEdge(p) (rdue[p] != 0 && rhung[p] <= runtil[p] && clk(p) == runtil[p] && clk(p) >= rdue[p])
#define SIMDUE(p) && rdue[p] != 0 && clk(p) >= rdue[p]
#define SIMFREE(p) && !writeDue(p, clk(p))
#define SIMMARK(p) && !writeDue(p, clk(p)) && !capEdge(p)
#define SIMLEAVE(p) rin[p] = 0;
#define SIMDONE(p) rin[p] = 0; rdue[p] = 0; runtil[p] = 0; rhung[p] = 0;
#else
#ifdef SIM
#define SIMTICK (nw != ntw || finished >= NATT) ->
#else
#define SIMTICK
#endif
#define SIMDUE(p)
#define SIMFREE(p)
#define SIMMARK(p)
#define SIMLEAVE(p)
#define SIMDONE(p)
#endif

/* the writes' codes in the trace (model/replay reads them) */
#define W_CLAIM      1
#define W_CLAIMPUT   2
#define W_RELEASE    3
#define W_COMMIT     4
#define W_RENEW      5
#define W_MARKEXT    6
#define W_MARKUNK    7
#define W_DONE       8
#define W_NOTDONE    9
#define W_FORGET     10

#ifdef MUT_EXISTING_FP
#define MUT_FP 1
#else
#define MUT_FP 0
#endif

/* ownLostCommit: the record a refused commit found is that very commit (our
 * token AND our outcome bytes): a reconciler commits an UNKNOWN record under
 * its owner's token with an outcome of its own (op.commit, op.reconcile) */
#ifdef MUT_OWN_LOST_COMMIT
#define ownLostCommit(x, t, o) (x.st == COMPLETED && x.tok == t)
#else
#define ownLostCommit(x, t, o) (x.st == COMPLETED && x.tok == t && x.out == o)
#endif

/*
 * A process step. A crash at any step is a process that takes no further
 * step: the schedule may stall any process at any step, until the
 * assumption stops it (goto stopped); once the clock has reached TMAX,
 * any process may stop.
 */
#define STEP(p) if :: alive(p) :: !alive(p) || now == TMAX -> goto stopped fi

/*
 * An attempt: lambdaidem.Do on the key, in claim-first (claimFirst, run)
 * or optimistic (optimistic) mode, with a Reconcile function.
 */
proctype Attempt(byte me) {
	Rec cur;
	byte why, c, tok, otok, lease, hold, v, exp, until, hung, want, round, f, sends, rtok, out, renewals, llen, sent;
	bit ok, err, haveOld, beganExt, lost, remembered, isOpt;

	deadline[me] = now + DL; lastContact[me] = now;
	if
	:: mode[me] == OPT -> goto optimistic
	:: else
	fi;

claimRound:
	/* lambdaidem.claimFirst: one round; Store.Claim = claimOrTakeOver, then claimExpired */
	if
	:: round >= ROUNDS + 2*(me == FINAL) -> goto refusedInProgress   /* maxRounds: ErrInProgress */
	:: else -> round++
	fi;
	atomic {
		STEP(me); c = clk(me); ntok++; tok = ntok; lease = deadline[me] + MARGIN;
		if :: me == FINAL -> lease = c + LEN :: else fi;
		hold = ownerHold(lease, lease, renews[me]); exp = expiryFor(c, hold, RH); ok = 0; err = 0;
		W1(me, f, claimUpdate(me, tok, c, lease, hold, exp, ok); if :: !ok -> refused(cur, haveOld) :: else -> COPY(cur, r); haveOld = 1 fi, W_CLAIM, err)
	}
	W2(me, f, claimUpdate(me, tok, c, lease, hold, exp, ok); if :: !ok -> refused(cur, haveOld) :: else -> COPY(cur, r); haveOld = 1 fi, W_CLAIM, err);
	if
	:: err -> goto releaseErrored
	:: else
	fi;
	readBack(cur, haveOld);
	if
	:: !ok && cur.st != ABSENT && judge(cur, c) == V_EXPIRED ->
		atomic {
			STEP(me);
			W1(me, f, claimPut(me, tok, c, lease, hold, exp, ok); if :: !ok -> refused(cur, haveOld) :: else -> COPY(cur, r); haveOld = 1 fi, W_CLAIMPUT, err)
		}
		W2(me, f, claimPut(me, tok, c, lease, hold, exp, ok); if :: !ok -> refused(cur, haveOld) :: else -> COPY(cur, r); haveOld = 1 fi, W_CLAIMPUT, err);
		if :: err -> goto releaseErrored :: else fi;
		readBack(cur, haveOld)
	:: else
	fi;
	if
	:: ok || (cur.st == INPROG && cur.tok == tok) -> goto owned  /* claimed, or ownLostClaim */
	:: else -> goto existing
	fi;

releaseErrored:
	/* op.releaseErrored: the claim may have applied with its answer lost */
	atomic { STEP(me); ok = 0; err = 0; W1(me, f, release(tok, 0, ok), W_RELEASE, err) }
	W2(me, f, release(tok, 0, ok), W_RELEASE, err);
	goto storeError;

existing:
	/* op.existing: what the gate (Judge) lets a duplicate do */
	atomic {
		STEP(me); c = clk(me); v = judge(cur, c);
		if
		:: v == V_ABSENT || v == V_EXPIRED -> goto reclaim           /* errReclaim */
#ifndef MUT_EXISTING_FP
		:: v != V_ABSENT && v != V_EXPIRED && cur.fp != fp[me] -> goto keyReused   /* ErrKeyReused */
#endif
		:: v == V_REPLAY && (cur.fp == fp[me] || MUT_FP) -> out = cur.out; goto answer
		:: v == V_HELD && (cur.fp == fp[me] || MUT_FP) -> goto refusedInProgress   /* ErrInProgress, ErrOutcomeUnknown */
		:: v == V_RECONCILE && (cur.fp == fp[me] || MUT_FP) -> goto reconcile
		:: v == V_TAKEOVER && (cur.fp == fp[me] || MUT_FP) -> goto reclaim
		fi
	}

reclaim:
	/* errReclaim: claim again (claim-first), commit again (optimistic) */
	if
	:: mode[me] == OPT -> goto optRound
	:: else -> goto claimRound
	fi;

reconcile:
	/* op.reconcile: Call.Reconcile asks the downstream system about Unknown.OperationKey */
	atomic {
		STEP(me); otok = cur.tok; ok = 0; err = 0;
		if
		:: landed > 0 -> printf("EV %d reconcile done\n", me); REACH(G_RECONCILE_FINAL, me == FINAL);
			REACH(G_RECONCILE_DONE, 1)
		:: landed == 0 && inflight == 0 ->
			printf("EV %d reconcile notdone\n", me); REACH(G_RECONCILE_FINAL, me == FINAL);
			REACH(G_RECONCILE_NOTDONE, 1);
			/* not done: Store.Release fenced on the owner's token; then claim again */
			W1(me, f, release(otok, 1, ok), W_RELEASE, err);
			goto notDone
		:: me != FINAL -> printf("EV %d reconcile cannottell\n", me); REACH(G_RECONCILE_CANNOTTELL, 1); goto outcomeUnknown
		fi;
		/* done: op.commit under the owner's token, the reconcile function's outcome */
		c = clk(me); exp = c + RH;
		W1(me, f, commitApply(me, otok, c, exp, REC(me), 0, 0, ok); if :: !ok -> refused(cur, haveOld) :: else -> haveOld = 1 fi, W_COMMIT, err)
	}
	W2(me, f, commitApply(me, otok, c, exp, REC(me), 0, 0, ok); if :: !ok -> refused(cur, haveOld) :: else -> haveOld = 1 fi, W_COMMIT, err);
	if :: err -> goto storeError :: else fi;
	readBack(cur, haveOld);
	if
	:: ok || ownLostCommit(cur, otok, REC(me)) -> out = REC(me); goto answer   /* op.commit's ownLostCommit */
	:: else -> goto reclaim    /* resolved by someone else: look again */
	fi;
notDone:
	W2(me, f, release(otok, 1, ok), W_RELEASE, err);
	if :: err -> goto storeError :: else -> goto reclaim fi;

owned:
	/* op.run: the handler, with its renewer (op.renew, keepAlive, renewOnce) */
	/* op.renew: the lease's length is rec.LeaseUntil - start on the owner's clock
	 * (none left: no renewer); keepAlive's hung = start + MaxRunTime */
	atomic { inHandler[me] = 1;
#ifdef SIMRENEW
		/* Go's renewer reads its start when the handler starts */
		c = clk(me);
#endif
		until = cur.lease; hung = c + MAXRUN; lost = 0; beganExt = 0;
		llen = (until > c -> until - c : 0);
#ifdef SIMRENEW
		if
		:: renews[me] && llen > 0 && me != FINAL -> rdue[me] = c + renewEvery(llen); runtil[me] = until; rhung[me] = hung
		:: else
		fi;
		rin[me] = 1;
		printf("EV %d run tok=%d due=%d\n", me, tok, rdue[me])
#else
		printf("EV %d run tok=%d\n", me, tok)
#endif
	}
	do
	:: renews[me] && llen > 0 && !lost && renewals < RENEWALS && me != FINAL SIMDUE(me) ->
		/* renewOnce: Store.Renew, fenced; the new lease never past MaxRunTime */
		atomic {
			STEP(me); c = clk(me); ok = 0; err = 0; renewals++;
			if
			:: c > until -> lost = 1; printf("EV %d renew lapsed\n", me)     /* lease ended unrenewed: giveUp */
			:: c <= until && hung <= until -> renewals = RENEWALS           /* MaxRunTime reached */
			:: c <= until && hung > until ->
				want = (c + llen < hung -> c + llen : hung); sent = now;
				hold = ownerHold(want, c, 1);
#ifndef MUT_RENEW_TTL
				exp = (exp > expiryFor(c, hold, 0) -> exp : expiryFor(c, hold, 0));  /* maxTime(expires, ExpiryFor(now, hold, 0)) */
#endif
#ifdef SIMRENEW
				f = F_NONE;
#else
				pickFault(f, me);
				if
				:: LATE && faults > 0 && me != FINAL && lateFree -> faults--; f = F_LATE
				:: true
				fi;
#endif
				if
				:: f == F_ERR -> err = 1
				:: f == F_LATE -> err = 1; REACH(G_TWO_LATE, !lateFree || late[0] != L_NONE); v = lslot; late[v] = L_RENEW; lme[v] = me; ltok[v] = tok; lc[v] = c;
					lwant[v] = want; lsent[v] = now; lhold[v] = hold; lexp[v] = exp; lext[v] = beganExt; v = 0
				:: else -> renew(me, tok, c, want, hold, exp, beganExt, now, ok)
				fi;
				printf("EV %d w %d f=%d ok=%d st=%d tok=%d lease=%d exp=%d ext=%d ren=%d hold=%d fp=%d out=%d\n", me, W_RENEW, f, ok, RECA)
#ifdef SIMRENEW
				;
				REACH(G_RENEW_APPLIED, ok); REACH(G_RENEW_REFUSED, !ok);
				if
				:: ok -> rdue[me] = c + renewEvery(llen); runtil[me] = want
				:: else -> rdue[me] = 0
				fi
#endif
			fi
		}
		if
		:: !lost && renewals <= RENEWALS && (ok || err) ->
			/* the SDK's resend carries the request as built: its sign of life is its sending */
			W2(me, f, renew(me, tok, c, want, hold, exp, beganExt, sent, ok), W_RENEW, err);
			if
			:: !err && ok -> until = want
			:: !err && !ok -> lost = 1          /* fenced out: giveUp */
			:: err                              /* retried while the lease lasts */
			fi
		:: else
		fi
	:: !beganExt && mode[me] == CF SIMMARK(me) ->
		/* Attempt.BeginExternal: holdsLease, then Store.MarkExternal */
		atomic {
			STEP(me); c = clk(me); ok = 0; err = 0;
#ifndef MUT_HOLDS_LEASE
			if :: lost || c > until -> SIMLEAVE(me) goto handlerFailed :: else fi;  /* ErrLeaseLost */
#endif
			W1(me, f, markExternal(tok, ok), W_MARKEXT, err)
		}
		W2(me, f, markExternal(tok, ok), W_MARKEXT, err);
		if
		:: !err && ok -> beganExt = 1
		:: else -> SIMLEAVE(me) goto handlerFailed           /* ErrLeaseLost / store error: no effect started */
		fi
#ifdef MUT_MARK_BEFORE_DISPATCH
	:: !dispatchedBy[me] && mode[me] == CF ->
#else
	:: beganExt && !dispatchedBy[me] SIMFREE(me) ->
#endif
		/* the handler's external call (with Attempt.OperationKey) */
		atomic { STEP(me); assert(dispatchOK); REACH(G_NOTDONE_REDISPATCH, landed + inflight > 0); dispatchOK = 0; inflight++; dispatchedBy[me] = 1;
			printf("EV %d dispatch\n", me) }
#ifdef SIMRENEW
	:: !writeDue(me, clk(me)) -> rin[me] = 0; break   /* the handler returns */
#else
	:: break                                    /* the handler returns */
#endif
#ifdef LEAKS
	:: beganExt && !dispatchedBy[me] && me != FINAL && renews[me] && LEAKS ->
		/* without assumption 2: the handler fails (its context ended), its external
		 * call left to a goroutine that the process keeps running. (Standard Lambda
		 * freezes such a goroutine and resumes it at the environment's next
		 * invocation, at any later time: no lease covers it at all.) */
		leaked[me] = 1; goto handlerFailed
#endif
	od;
	if
	:: true -> goto commit
	:: me != FINAL -> goto handlerFailed        /* an error, a panic, a cancelled context */
	fi;

handlerFailed:
	/* op.abandon: release the claim, or keep the record UNKNOWN */
	atomic {
		STEP(me); inHandler[me] = 0; SIMDONE(me) c = clk(me); ok = 0; err = 0;
		if
		:: beganExt -> W1(me, f, markUnknown(tok, c, ok), W_MARKUNK, err)
		:: else -> W1(me, f, release(tok, 0, ok), W_RELEASE, err)
		fi
	}
	if
	:: beganExt -> W2(me, f, markUnknown(tok, c, ok), W_MARKUNK, err)
	:: else -> W2(me, f, release(tok, 0, ok), W_RELEASE, err)
	fi;
	goto handlerError;

commit:
	/* op.commit with the staged effects: Store.Commit, TransactWriteItems (fenceCondition;
	 * optimistic: optimisticCommitCondition) */
	/* its clock read is printed: model/replay lets the code read its clock
	 * (op.commit's Now) at this step, not at the write's */
	atomic { inHandler[me] = 0; SIMDONE(me) c = clk(me); exp = c + RH; rtok++; remembered = 0; sends = 0; isOpt = (mode[me] == OPT);
		printf("EV %d commit at c=%d\n", me, c) }
resend:
	/* Store.transact: a resend after a cancellation, within FinishTimeout */
	atomic {
		STEP(me); ok = 0; err = 0; sends++;
		if
		:: remembered -> goto cancelled   /* DynamoDB replays the cancellation remembered under the token */
		:: else
		fi;
		if
		:: f = F_NONE
		:: faults > 0 && me != FINAL -> faults--; f = F_LOSTERR
		:: faults > 0 && me != FINAL -> faults--; f = F_LOSTRETRY
		:: faults > 0 && me != FINAL -> faults--; f = F_ERR
		:: LATE && faults > 0 && me != FINAL && lateFree -> faults--; f = F_LATE
		:: faults > 0 && me != FINAL -> faults--; f = F_CONFLICT
		:: me == FINAL && sends == 1 -> f = F_CONFLICT
		fi;
		if
		:: f == F_CONFLICT -> goto cancelled
		:: f == F_ERR -> printf("EV %d w %d f=1 ok=0 st=%d tok=%d lease=%d exp=%d ext=%d ren=%d hold=%d fp=%d out=%d\n", me, W_COMMIT, RECA); goto commitFailed
		:: f == F_LATE -> v = lslot; late[v] = L_COMMIT; lme[v] = me; ltok[v] = tok; lc[v] = c; lexp[v] = exp;
			lout[v] = OUT(me); lclaim[v] = isOpt; v = 0;
			printf("EV %d w %d f=5 ok=0 st=%d tok=%d lease=%d exp=%d ext=%d ren=%d hold=%d fp=%d out=%d\n", me, W_COMMIT, RECA); goto commitFailed
		:: else
		fi;
		commitApply(me, tok, c, exp, OUT(me), isOpt, 1, ok);
		if :: !ok -> refused(cur, haveOld) :: else -> haveOld = 1 fi;
		printf("EV %d w %d f=%d ok=%d st=%d tok=%d lease=%d exp=%d ext=%d ren=%d hold=%d fp=%d out=%d\n", me, W_COMMIT, f, ok, RECA); SIMSTEP
	}
	if
	:: f == F_LOSTERR -> goto commitFailed
	:: else            /* F_LOSTRETRY: the resend carries the token of a success: success (documented) */
	fi;
	readBack(cur, haveOld);
	if
	:: ok -> out = OUT(me); goto answer
	:: !ok && ownLostCommit(cur, tok, OUT(me)) -> out = OUT(me); goto answer
	:: else -> REACH(G_OPT_REFUSED, isOpt); goto commitRefused
	fi;

cancelled:
	/* a definite "nothing applied": send again with a new ClientRequestToken */
	printf("EV %d commit cancelled st=%d tok=%d lease=%d exp=%d ext=%d ren=%d hold=%d fp=%d out=%d\n", me, RECA);
	if
	:: sends > RESENDS -> goto commitFailed
	:: else
	fi;
#ifdef MUT_NEW_TOKEN
	/* the same token: whether DynamoDB remembers the cancellation is not documented */
	if :: remembered = 1 :: remembered = 0 fi;
#else
	rtok++; remembered = 0;
#endif
	goto resend;

commitRefused:
	/* the record in the way: a reconciler's outcome under our token, or a takeover */
	atomic {
		STEP(me); c = clk(me);
		if
		:: mode[me] == OPT -> goto existing       /* optimistic: look at it as a duplicate */
		:: judge(cur, c) == V_REPLAY && cur.fp == fp[me] -> out = cur.out; goto answer
		:: else -> goto leaseLost
		fi
	}

commitFailed:
	/* the commit ended in an error: abandon (claim-first) */
	if
	:: mode[me] == CF ->
		atomic {
			STEP(me); c = clk(me); ok = 0; err = 0;
			if
			:: beganExt -> W1(me, f, markUnknown(tok, c, ok), W_MARKUNK, err)
			:: else -> W1(me, f, release(tok, 0, ok), W_RELEASE, err)
			fi
		}
		if
		:: beganExt -> W2(me, f, markUnknown(tok, c, ok), W_MARKUNK, err)
		:: else -> W2(me, f, release(tok, 0, ok), W_RELEASE, err)
		fi
	:: else
	fi;
	goto storeError;

optimistic:
	/* lambdaidem.optimistic: the handler first, then the commit that claims */
	atomic { STEP(me); ntok++; tok = ntok; printf("EV %d handler\n", me) }
	if
	:: true
	:: goto handlerError
	fi;
optRound:
	if
	:: round >= ROUNDS -> goto refusedInProgress
	:: else -> round++
	fi;
	goto commit;

answer:
	/* (c) the answer is an outcome stored for this intent */
	assert(storedFp[out] == fp[me]); why = 1; goto end;
keyReused:
	why = 2; goto end;
refusedInProgress:
	why = 3; goto end;
outcomeUnknown:
	why = 4; goto end;
storeError:
	why = 5; goto end;
leaseLost:
	why = 6; goto end;
handlerError:
	why = 7; goto end;
stopped:
	why = 8;
end:
	atomic {
		printf("EV %d end %d out=%d\n", me, why, out);
		if
		:: me == FINAL -> progressed = (out != 0) || (cur.fp != fp[me] && cur.st != ABSENT)
		:: else
		fi;
		inHandler[me] = 0; SIMDONE(me) finished++;
		/* forget what no property reads any more: fewer states */
		dispatchedBy[me] = 0;
		if :: !leaked[me] -> deadline[me] = 0; lastContact[me] = 0; renews[me] = 0 :: else fi;
		if :: me != FINAL -> skew[me] = 0; mode[me] = 0; fp[me] = 0 :: else fi;
		CLEAR(cur); c = 0; tok = 0; lease = 0; exp = 0; until = 0; hung = 0; want = 0; round = 0;
		f = 0; sends = 0; rtok = 0; out = 0; ok = 0; err = 0; haveOld = 0; beganExt = 0; lost = 0;
		remembered = 0; otok = 0; isOpt = 0; hold = 0; v = 0; why = 0; renewals = 0; llen = 0; sent = 0
	}
}

/* UnchangedCondition (dynamostore/records_expr.go): the record as read, its
 * hold_until and renewed_at included (issue 32 item 5): two renewals capped
 * at MaxRunTime write the same lease, and on an external record no
 * expiration, so without them a renewal that lands after the operator's
 * read holds the record again and the operator settles it anyway
 * (-DMUT_UNCHANGED_HOLD: the condition before that fix) */
#ifdef MUT_UNCHANGED
#define unchanged(x) 1
#elif defined(MUT_UNCHANGED_HOLD)
#define unchanged(x) (r.st == x.st && r.tok == x.tok && r.exp == x.exp && r.lease == x.lease && r.ext == x.ext)
#else
#define unchanged(x) (r.st == x.st && r.tok == x.tok && r.exp == x.exp && r.lease == x.lease && r.ext == x.ext && \
	r.hold == x.hold && r.renewed == x.renewed)
#endif
#ifdef MUT_OPERATOR_GATE
#define opJudge(x, c) (ownerMayRun(x, c) && (x.st == UNKNOWN || x.ext) -> V_RECONCILE : judge(x, c))
#else
#define opJudge(x, c) judge(x, c)
#endif
#define RESOLVE_DONE if :: unchanged(cur) -> REACH(G_RESOLVE_DONE, 1); OVERWRITE; r.st = COMPLETED; r.exp = exp; r.ext = 0; r.lease = 0; \
	r.hold = 0; r.renewed = 0; r.out = OPOUT; storedFp[OPOUT] = r.fp; ok = 1 :: else -> ok = 0 fi
#define RESOLVE_NOTDONE if :: unchanged(cur) -> assert(noDispatcher); OVERWRITE; CLEAR(r); holder = 0; dispatchOK = 1; ok = 1 :: else -> ok = 0 fi
#define FORGET if :: unchanged(cur) -> opCommits = 0; dispatchOK = 1; CLEAR(r); holder = 0; ok = 1 :: else -> ok = 0 fi
proctype Operator() {
	byte me = OPID;
	Rec cur;
	byte c, f, exp, v;
	bit ok, err;
	/* Records.Read, then Records.Judge */
	atomic {
#ifdef SIM
		/* model/replay's samples: the operator looks at a record nobody may run
		 * under any more, or once the attempts ended (random simulation would
		 * otherwise mostly read before the first claim, or a held record) */
		(r.st != ABSENT && !ownerMayRun(r, clk(OPID))) || (finished >= NATT && (r.st == ABSENT || now == TMAX)) ->
#endif
		c = clk(OPID); COPY(cur, r); v = opJudge(cur, c); opRead = 1; printf("EV %d opread v=%d st=%d tok=%d lease=%d exp=%d ext=%d ren=%d hold=%d fp=%d out=%d\n", me, v, RECA) }
	if
	:: v == V_RECONCILE && landed > 0 ->
		/* resolve --done: PutItem of the completed item under the owner's token */
		atomic { exp = (cur.exp == INF -> c + RH : (cur.exp > c + RH -> cur.exp : c + RH)); ok = 0; err = 0;
			W1(OPID, f, RESOLVE_DONE, W_DONE, err) }
		W2(OPID, f, RESOLVE_DONE, W_DONE, err)
	:: (v == V_RECONCILE || v == V_TAKEOVER || (v == V_EXPIRED && cur.st == INPROG)) && landed == 0 && inflight == 0 ->
		/* resolve --not-done (DeleteItem), or forget of a record nobody runs under */
		atomic { ok = 0; err = 0;   /* (b) is asserted where the deletion applies */
			W1(OPID, f, RESOLVE_NOTDONE, W_NOTDONE, err) }
		W2(OPID, f, RESOLVE_NOTDONE, W_NOTDONE, err)
	:: cur.st == COMPLETED ->
		/* forget a completed record (Records.Forget): the operation starts afresh */
		atomic { ok = 0; err = 0; W1(OPID, f, FORGET, W_FORGET, err) }
		W2(OPID, f, FORGET, W_FORGET, err)
	:: true
	fi;
	atomic { finished++; skew[OPID] = 0; CLEAR(cur); c = 0; f = 0; exp = 0; ok = 0; err = 0; me = 0; v = 0 }
}

#define INVARIANT ((r.st != INPROG || r.ext || (r.exp > r.hold && r.exp > r.lease)) && \
	((r.st != UNKNOWN && !(r.st == INPROG && r.ext)) || r.exp == INF))

/* a late write applied: slot i */
inline lateRenew(i, ok) {
	renew(lme[i], ltok[i], lc[i], lwant[i], lhold[i], lexp[i], lext[i], lsent[i], ok);
	REACH(G_LATE_AFTER_READ, ok && opRead);
	/* printed before the slot is cleared: me is whose write it was */
	printf("EV 0 late %d ok=%d me=%d st=%d tok=%d lease=%d exp=%d ext=%d ren=%d hold=%d fp=%d out=%d\n", L_RENEW, ok, lme[i], RECA);
	late[i] = L_NONE; lme[i] = 0; ltok[i] = 0; lc[i] = 0; lwant[i] = 0; lhold[i] = 0; lexp[i] = 0; lext[i] = 0; lsent[i] = 0; ok = 0
}
inline lateCommit(i, ok) {
	commitApply(lme[i], ltok[i], lc[i], lexp[i], lout[i], lclaim[i], 1, ok);
	printf("EV 0 late %d ok=%d me=%d st=%d tok=%d lease=%d exp=%d ext=%d ren=%d hold=%d fp=%d out=%d\n", L_COMMIT, ok, lme[i], RECA);
	late[i] = L_NONE; lme[i] = 0; ltok[i] = 0; lc[i] = 0; lexp[i] = 0; lout[i] = 0; lclaim[i] = 0; ok = 0
}

/* DynamoDB's TTL deletion (any time after expiry), the clock, the downstream system */
proctype Env() {
	bit ok;
end:
	do
#ifndef SIM
	/* the per-state invariants, in every state: an INPROGRESS record without
	 * the external mark expires only after its hold and its lease (ExpiryFor);
	 * an UNKNOWN or external record never expires (a self-loop: no new state;
	 * left out of model/replay's random samples, which it would only slow) */
	:: assert(INVARIANT)
#endif
	:: atomic { SIMTICK now < TMAX -> now++; SIMTOCK printf("EV 0 tick %d\n", now) }
	:: atomic { r.st != ABSENT && r.exp != INF && now > r.exp -> OVERWRITE; REACH(G_TTL_INPROG, r.st == INPROG); CLEAR(r); holder = 0;
		printf("EV 0 ttl st=%d tok=%d lease=%d exp=%d ext=%d ren=%d hold=%d fp=%d out=%d\n", RECA) }
	:: atomic { late[0] == L_RENEW -> lateRenew(0, ok) }
	:: atomic { late[0] == L_COMMIT -> lateCommit(0, ok) }
	:: atomic { late[1] == L_RENEW -> lateRenew(1, ok) }
	:: atomic { late[1] == L_COMMIT -> lateCommit(1, ok) }
#ifdef LEAKS
	:: atomic { leaked[1] && alive(1) -> assert(dispatchOK); dispatchOK = 0; inflight++; leaked[1] = 0;
		printf("EV 1 dispatch\n") }
	:: atomic { leaked[2] && alive(2) -> assert(dispatchOK); dispatchOK = 0; inflight++; leaked[2] = 0;
		printf("EV 2 dispatch\n") }
	:: atomic { leaked[3] && alive(3) -> assert(dispatchOK); dispatchOK = 0; inflight++; leaked[3] = 0;
		printf("EV 3 dispatch\n") }
	:: atomic { (leaked[1] && (!alive(1) || now == TMAX)) || (leaked[2] && (!alive(2) || now == TMAX)) ||
		(leaked[3] && (!alive(3) || now == TMAX)) ->
		/* the process stopped before its goroutine called */
		if :: leaked[1] && (!alive(1) || now == TMAX) -> leaked[1] = 0; deadline[1] = 0; lastContact[1] = 0; renews[1] = 0 :: else fi;
		if :: leaked[2] && (!alive(2) || now == TMAX) -> leaked[2] = 0; deadline[2] = 0; lastContact[2] = 0; renews[2] = 0 :: else fi;
		if :: leaked[3] && (!alive(3) || now == TMAX) -> leaked[3] = 0; deadline[3] = 0; lastContact[3] = 0; renews[3] = 0 :: else fi }
#endif
	:: atomic { inflight > 0 -> inflight--; landed++; printf("EV 0 land\n") }
	:: atomic { inflight > 0 -> inflight--; printf("EV 0 drop\n") }
	od
}

init {
	byte i;
	atomic {
		i = 1;
		do
		:: i <= NATT ->
			/* the first attempt's clock is behind, every later actor's ahead: the
			 * worst case for a reader judging an owner's times (the other
			 * directions only make readers more careful) */
			if :: i == 1 -> skew[i] = 0 :: else -> skew[i] = 2*SKEW fi;
			/* renewing or not: attempts 1 and 2 each way, the third as the second */
			if
			:: i <= 2 -> if :: renews[i] = 0 :: RENEWS -> renews[i] = 1 fi
			:: else -> renews[i] = renews[i-1]
			fi;
			fp[i] = 1;
			if
			:: i > 1 && OPTIMISTIC -> if :: mode[i] = CF :: mode[i] = OPT fi
			:: else -> mode[i] = CF
			fi;
			if
			:: i == NATT && REUSE -> if :: fp[i] = 1 :: fp[i] = 2 fi
			:: else
			fi;
			i++
		:: else -> break
		od;
		skew[OPID] = 2*SKEW;
		skew[FINAL] = SKEW; fp[FINAL] = 1; mode[FINAL] = CF; renews[FINAL] = 0;
		i = 1;
		do
		:: i <= NATT -> printf("EV %d cfg mode=%d fp=%d renews=%d skew=%d\n", i, mode[i], fp[i], renews[i], skew[i]); i++
		:: else -> break
		od;
		run Env();
		i = 1;
		do
		:: i <= NATT -> run Attempt(i); i++
		:: else -> break
		od;
		if :: OPERATOR -> run Operator() :: else -> finished++ fi
	}
	/* (e) progress: once every attempt and the operator ended, the downstream
	 * system answered every call, and every window passed, one retry with a
	 * Reconcile function gets an answer. */
	finished == NATT + 1 && !leaked[1] && !leaked[2] && !leaked[3];
#ifdef NOFINAL
	0;
#endif
	atomic {
		do
		:: inflight > 0 -> inflight--; landed++
		:: inflight > 0 -> inflight--
		:: else -> break
		od;
		now = TFINAL;
		printf("EV 0 final %d\n", now);
		run Attempt(FINAL)
	}
	finished == NATT + 2;
	assert(progressed);
#ifdef GOAL_AT_END
	assert(!goalReached)
#endif
}
