/*
 * outbox.pml: one record key's outbox (issue 33 item 4; DESIGN §2.6, §8a),
 * checked with spin. Self-contained: record.pml models the record protocol;
 * this model keeps only the outbox item under the key, the relays and the
 * target's deduplication window.
 *
 * Actors:
 *   Client     operations under the key, one after another: operation 1, then
 *              (key reuse after its record expired, any later tick) operation 2.
 *              Each has up to NATT attempts; an attempt crashes before its
 *              commit or commits the record and the outbox item in one
 *              transaction (dynamostore/effects.go outboxPut: Put, PutCondition
 *              "attribute_not_exists(#id) OR #status = :published"); a refused
 *              PutCondition cancels the whole commit. Message ids are per
 *              operation (lambdaidem/outbox ID(operationKey, since, position)).
 *   Relay(r)   two relays (the stream delivers the item's records again after
 *              a failure): Relay.Publish (dynamostore/relay/relay.go) reads the
 *              item (read, ConsistentRead), then step: the window check
 *              (outbox.Lands -> lambdaidem.WithinWindow with WindowMargin),
 *              the dispatch mark (DispatchUpdate under DispatchCondition), the
 *              publish (Publisher.Publish, lands at the target at any tick
 *              until its PublishTimeout), the mark (MarkUpdate / MarkLastUpdate
 *              under MarkCondition = atPosition); setAside (AsideUpdate under
 *              AsideCondition on the copy, then MovedUpdate under
 *              MovedCondition = atPosition). A relay stops at any step (crash,
 *              budget CRASHES); a stopped or failed Publish is delivered again.
 *              A mark is applied late: any number of steps of the other relay
 *              and ticks may pass between a relay's read and its write.
 *   Clock      one tick at a time to TMAX; the window can pass at any tick.
 *
 * Time is in ticks. W is every message's window (Message.Window), TOOK the
 * PublishTimeout (a publish lands at most TOOK ticks after it begins), SKEW
 * the relay's ClockSkew (one clock in the model: 0 by default), MARGIN =
 * WindowMargin(SKEW, TOOK) = SKEW + TOOK.
 *
 * The target (SQS FIFO / a consumer keyed on the id) accepts a landing whose
 * id it has not accepted within W ticks and drops the others.
 *
 * Properties (assertions):
 *   P1 every committed message is published at least once or set aside
 *      (checked when nothing can move: timeout)
 *   P2 no message is published for an attempt that did not commit
 *   P3 no message is accepted by the target twice (a publish or redispatch
 *      landing past the window of its first acceptance is a duplicate)
 *   P4 a set-aside message never blocks a later operation's commit: a refused
 *      PutCondition finds a PENDING item, never a set-aside one
 *   P5 ids of two operations never collide: no message of one operation is
 *      dropped as a duplicate of another's (its loss shows in P1; P5 asserts
 *      it at the drop)
 *   P6 nothing after a set-aside position is begun from the original item
 *      (the copy holds it)
 */

#ifndef TMAX
#define TMAX 6
#endif
#ifndef W
#define W 3
#endif
#ifndef TOOK
#define TOOK 1
#endif
#ifndef SKEW
#define SKEW 0
#endif
#ifndef CRASHES
#define CRASHES 1
#endif
#ifndef UNPUB
#define UNPUB 1
#endif
#ifndef NATT
#define NATT 2
#endif
#ifndef NOPS
#define NOPS 2
#endif
#define NMSG 2
#define NONE 255

#ifdef MUT_NO_MARGIN
#define MARGIN 0
#else
#define MARGIN (SKEW + TOOK)
#endif

/* goals: -DGOAL=<id> turns one into an assertion spin must violate */
#define G_TWICE 1        /* a message published twice within its window (dropped by the target) */
#define G_SET_ASIDE 2    /* a message set aside (MovedUpdate applied) */
#define G_LATE_MARK 3    /* a late mark refused (MarkCondition false) */
#define G_REUSE 4        /* a second operation's item committed under the key */
#define G_PAST_WINDOW 5  /* a set-aside because the window passed (Lands refused) */
#ifdef GOAL
bit goalReached;
#define REACH(id, cond) if :: GOAL == id && (cond) -> goalReached = 1; assert(!goalReached) :: else fi
#else
#define REACH(id, cond) skip
#endif

#define PENDING 1
#define PUBLISHED 2

/* replay lines (dev/relaymodel): "EV pid event op pos now iop istatus ipub
 * idisp", the state after the event; printf only, no state of its own */
#define EVS now, iop, istatus, ipub, idisp

byte now;                     /* the clock */
/* the outbox item under the record key */
byte iop;                     /* whose operation's item; 0: none */
byte istatus;                 /* PENDING, PUBLISHED (also: moved aside) */
byte ipub;                    /* #published */
byte idisp = NONE;            /* #dispatched (tick), NONE: absent */
/* the aside copy of each operation's item (AsideKey: key + committed_at) */
byte copyPos[NOPS + 1] = NONE;       /* NONE: no copy; else its #published */
byte movedAt[NOPS + 1] = NONE;       /* ghost: the position the original was moved at */
/* ghosts */
bit committed[NOPS + 1];
bit got[NOPS * NMSG];         /* accepted by the target at least once */
/* the target: per id, when it last accepted it and whose message it was */
byte seenAt[NOPS * NMSG] = NONE;
byte seenMsg[NOPS * NMSG];
byte crashes;
byte unpub;
bit clientDone;

#define MSG(op, pos) (((op) - 1) * NMSG + (pos))
#ifdef MUT_IDS_PER_KEY
#define ID(op, pos) (pos)
#else
#define ID(op, pos) MSG(op, pos)
#endif

/* atPosition "#status = :pending AND #published = :position" */
#ifdef MUT_NO_STATUS
#define STATUS_OK true
#else
#define STATUS_OK (istatus == PENDING)
#endif
#ifdef MUT_NO_POSITION
#define POSITION_OK(p) true
#else
#define POSITION_OK(p) (ipub == (p))
#endif
/* atPosition compares the operation (#committed = :committed): without it
 * (-DMUT_NO_OPFENCE, the code before the fix of finding O2) a late mark
 * after key reuse applies to the next operation's item. */
#ifndef MUT_NO_OPFENCE
#define AT_POSITION(p) (iop == lop && STATUS_OK && POSITION_OK(p))
#else
#define AT_POSITION(p) (iop != 0 && STATUS_OK && POSITION_OK(p))
#endif
/* DispatchCondition = atPosition + " AND attribute_not_exists(#dispatched)" */
#ifdef MUT_DISPATCH_EXISTS
#define DISPATCH_OK(p) AT_POSITION(p)
#else
#define DISPATCH_OK(p) (AT_POSITION(p) && idisp == NONE)
#endif
/* lambdaidem.WithinWindow(first, window, now, margin):
 * window <= 0 || first.IsZero() || now.Add(margin).Before(first.Add(window)) */
#define WITHIN(first) ((first) == NONE || now + MARGIN < (first) + W)

active proctype Clock() {
	do
	:: atomic { now < TMAX -> now++; printf("EV %d tick %d %d %d %d %d %d %d\n", _pid, 0, 0, EVS) }
	:: else -> break
	od
}

active proctype Client() {
	byte op = 1, att;
	do
	:: op > NOPS -> break
	:: op <= NOPS ->
		att = 0;
		do
		:: att == NATT || committed[op] -> break
		:: att < NATT && !committed[op] ->
			att++;
			if
			:: printf("EV %d attcrash %d %d %d %d %d %d %d\n", _pid, op, att, EVS) /* the attempt crashes before its commit: nothing written */
			:: atomic {
				/* Store.commit: TransactWriteItems with outboxPut's Put under PutCondition */
				if
				:: iop == 0 || istatus == PUBLISHED ->
					REACH(G_REUSE, op == 2);
					iop = op; istatus = PENDING; ipub = 0; idisp = NONE;
					committed[op] = 1;
					printf("EV %d commit %d %d %d %d %d %d %d\n", _pid, op, att, EVS)
				:: else ->
					/* P4: the refusal finds an unpublished item, never a set-aside one */
					assert(istatus == PENDING);
					printf("EV %d refused %d %d %d %d %d %d %d\n", _pid, op, att, EVS)
				fi
			   }
			fi
		od;
		op++ /* key reuse: the record expired at some later tick (any interleaving) */
	od;
	clientDone = 1
}

/* the target receives a landing of message (op, pos) */
inline land(op, pos) {
	{
		/* P2 */
		assert(committed[op]);
		if
		:: seenAt[ID(op, pos)] != NONE && now < seenAt[ID(op, pos)] + W ->
			/* dropped as a duplicate within the window */
			/* P5: only its own earlier copy may make it a duplicate */
			assert(seenMsg[ID(op, pos)] == MSG(op, pos));
			printf("EV %d landdup %d %d %d %d %d %d %d\n", _pid, op, pos, EVS);
			REACH(G_TWICE, true)
		:: else ->
			/* P3: a second acceptance is a duplicate effect */
			assert(!got[MSG(op, pos)]);
			got[MSG(op, pos)] = 1;
			seenAt[ID(op, pos)] = now;
			seenMsg[ID(op, pos)] = MSG(op, pos);
			printf("EV %d land %d %d %d %d %d %d %d\n", _pid, op, pos, EVS)
		fi
	}
}

#define CRASH (crashes < CRASHES) -> atomic { crashes++; printf("EV %d crash %d %d %d %d %d %d %d\n", _pid, lop, lpos, EVS) }; goto again

proctype Relay() {
	byte lop, lst, lpos, ldisp, start;
	bit fromWindow;
again:
	skip;
	d_step { lop = 0; lst = 0; lpos = 0; ldisp = 0; start = 0; fromWindow = 0 }
	/* the stream delivers the item's record (again) while it is PENDING */
	if
	:: istatus == PENDING && iop != 0
	:: clientDone && (iop == 0 || istatus != PENDING) -> goto done
	fi;
read:
	skip;
	d_step { start = 0; fromWindow = 0 }
	/* Relay.read: GetItem, ConsistentRead */
	d_step { lop = iop; lst = istatus; lpos = ipub; ldisp = idisp; printf("EV %d read %d %d %d %d %d %d %d\n", _pid, lop, lpos, EVS) }
	if
	:: lst != PENDING -> goto again /* Publish: loop ends */
	:: else
	fi;
step:
	/* Relay.step */
	if
	:: CRASH
	/* outbox.Lands(m, it.DispatchedAt, now, WindowMargin(ClockSkew, PublishTimeout))
	 * and the publish that follows it at once (no I/O between them) */
	:: atomic { !WITHIN(ldisp) -> fromWindow = 1; printf("EV %d windowaside %d %d %d %d %d %d %d\n", _pid, lop, lpos, EVS); goto aside }  /* refused: setAside */
	:: atomic { WITHIN(ldisp) && ldisp != NONE -> start = now; printf("EV %d resume %d %d %d %d %d %d %d\n", _pid, lop, lpos, EVS); goto publish }
	:: WITHIN(ldisp) && ldisp == NONE ->
		/* DispatchUpdate "SET #dispatched = :nowMs" under DispatchCondition */
		if
		:: atomic { DISPATCH_OK(lpos) -> idisp = now; ldisp = now; printf("EV %d dispatch %d %d %d %d %d %d %d\n", _pid, lop, lpos, EVS) }
		:: atomic { else -> printf("EV %d dispatchrefused %d %d %d %d %d %d %d\n", _pid, lop, lpos, EVS); goto read }  /* !ok: another relay moved the item */
		fi;
		/* the update returns at any later tick; the PublishTimeout starts then.
		 * relay.step asks Lands again with the recorded dispatch (the fix of
		 * finding O1); -DMUT_NO_RECHECK is the code before it */
#ifndef MUT_NO_RECHECK
		atomic {
			if
			:: !WITHIN(ldisp) -> fromWindow = 1; printf("EV %d recheckaside %d %d %d %d %d %d %d\n", _pid, lop, lpos, EVS); goto aside
			:: else -> start = now; printf("EV %d recheckok %d %d %d %d %d %d %d\n", _pid, lop, lpos, EVS)
			fi
		}
#else
		start = now
#endif
	fi;
publish:
	/* P6: nothing after a set-aside position from the original item */
	assert(movedAt[lop] == NONE || lpos <= movedAt[lop]);
	if
	:: CRASH
	:: atomic { (unpub < UNPUB) -> unpub++; fromWindow = 0; printf("EV %d unpub %d %d %d %d %d %d %d\n", _pid, lop, lpos, EVS) }; goto aside /* outbox.ErrUnpublishable */
	:: d_step { now <= start + TOOK -> land(lop, lpos) }  /* lands within PublishTimeout */
	:: printf("EV %d pubfail %d %d %d %d %d %d %d\n", _pid, lop, lpos, EVS); goto again  /* failed before landing (timeout, error): delivered again */
	fi;
	/* a publish that landed, then the relay stops or times out: delivered again */
	if
	:: CRASH
	:: skip
	fi;
	/* the mark: MarkUpdate / MarkLastUpdate under MarkCondition (= atPosition) */
	if
	:: atomic { AT_POSITION(lpos) && iop == lop ->
		ipub = lpos + 1; idisp = NONE;
		if
		:: ipub == NMSG -> istatus = PUBLISHED
		:: else
		fi;
		printf("EV %d mark %d %d %d %d %d %d %d\n", _pid, lop, lpos, EVS)
	   }
	:: atomic { AT_POSITION(lpos) && iop != lop ->
		/* the condition holds on another operation's item (key reuse):
		 * the mark applies to it */
		ipub = lpos + 1; idisp = NONE;
		if
		:: ipub == NMSG -> istatus = PUBLISHED
		:: else
		fi;
		printf("EV %d mark %d %d %d %d %d %d %d\n", _pid, lop, lpos, EVS)
	   }
	:: atomic { !AT_POSITION(lpos) -> printf("EV %d markrefused %d %d %d %d %d %d %d\n", _pid, lop, lpos, EVS); REACH(G_LATE_MARK, true); goto read }
	fi;
	if
	:: lpos + 1 == NMSG -> goto again
	:: else -> lpos++; ldisp = NONE; goto step
	fi;
aside:
	/* Relay.setAside: the copy (AsideUpdate under AsideCondition
	 * "attribute_not_exists(#id)"; a refusal is ignored), then MovedUpdate
	 * under MovedCondition (= atPosition) */
	if
	:: CRASH
	:: else
	fi;
	atomic {
		if
		:: copyPos[lop] == NONE -> copyPos[lop] = lpos
		:: else
		fi;
		printf("EV %d copy %d %d %d %d %d %d %d\n", _pid, lop, lpos, EVS)
	}
	if
	:: CRASH
	:: else
	fi;
	if
	:: atomic { AT_POSITION(lpos) ->
		REACH(G_SET_ASIDE, true);
		REACH(G_PAST_WINDOW, fromWindow);
		if
		:: movedAt[iop] == NONE -> movedAt[iop] = lpos
		:: else
		fi;
		istatus = PUBLISHED; idisp = NONE;
		printf("EV %d moved %d %d %d %d %d %d %d\n", _pid, lop, lpos, EVS)
	   }
	:: atomic { else -> printf("EV %d movedrefused %d %d %d %d %d %d %d\n", _pid, lop, lpos, EVS); goto read }
	fi;
	goto again;  /* ErrSetAside: record() logs it and returns nil */
done:
	skip
}

/* P1, when nothing can move: every committed message published or set aside
 * (the copy holds positions from copyPos on; the original moved at movedAt) */
active proctype Check() {
	byte op, pos;
	timeout ->
	op = 1;
	do
	:: op > NOPS -> break
	:: op <= NOPS ->
		pos = 0;
		do
		:: pos == NMSG -> break
		:: pos < NMSG ->
			assert(!committed[op] || got[MSG(op, pos)] ||
				(movedAt[op] != NONE && pos >= movedAt[op] && copyPos[op] <= pos));
			pos++
		od;
		op++
	od
}

init {
	run Relay(); run Relay()
}
