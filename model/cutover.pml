/*
 * cutover.pml: one operation during a Powertools cutover window (issue 35,
 * issue 33 item 7), checked with spin. Self-contained: record.pml models the
 * record protocol alone; this model keeps only what the window adds.
 *
 * Two items on one table: lambdaidem's record R (under lambdaidem's key) and
 * the Powertools-shaped item K (under the Powertools key the old function
 * derives for the same event). Actors:
 *
 *   Powertools(i)  an instance of the old function (Powertools for AWS Lambda):
 *                  its conditional PutItem claim, its effect (outside any
 *                  transaction), its unconditional completion UpdateItem, its
 *                  unconditional DeleteItem on a handler error; it stops at any
 *                  step (crash) and at the latest at its in_progress_expiration
 *                  (the Lambda deadline it wrote).
 *   Lambdaidem(j)  a lambdaidem owner inside the window, claim-first, as built
 *                  in dynamostore/powertools.go: claim R (Store.claim), then the
 *                  shadow's PutItem (claimBeside, shadowClaimCondition); refused:
 *                  release R (s.release, fenceCondition) and answer from K
 *                  (powertoolsAnswer, powertools.Judge); renew R then the shadow
 *                  (Renew -> followShadow shadowRenewed, shadowFenceCondition);
 *                  BeginExternal (MarkExternal -> followShadow shadowHeld);
 *                  commit = one TransactWriteItems of R (fenceCondition), the
 *                  business write and the shadow COMPLETED (commitBeside,
 *                  shadowFenceCondition); a shadow no longer ours: release R
 *                  and answer from K; handler error: Release R then the shadow
 *                  (Release -> followShadow shadowReleased). It stops at any
 *                  step and at the latest at its hold (assumption 1 of
 *                  record.pml: an owner takes no step past its hold).
 *   Env            the clock (one tick at a time to TMAX).
 *
 * Faults (budget FAULTS): followShadow's write fails with an error (since
 * 43f48cb Renew and MarkExternal return it, Release drops it); a refusal of
 * followShadow's write (shadowFenceCondition false) is no error (fenced:
 * false, nil) and fails nothing; the shadow's PutItem fails with an error
 * (the core gives the claim back: Release, which removes a shadow that did
 * land) applied or not.
 *
 * A renewal's shadow follow is sent at once and applied at any later step
 * while the renewed owner may run (the SDK's retries of a throttled
 * UpdateItem): it can land after the shadow's old in_progress_expiration.
 *
 * Variants: -DEXTERNAL=0 (no external calls); -DMUT_<NAME>
 * (model/cutover.sh). -DMUT_FENCED_FOLLOW is the code before the fix of
 * finding C2 (followShadow treating a refused follow as done).
 *
 * Finding C2 (fixed in dynamostore.followShadow: errShadowTaken; the mutant
 * FENCED_FOLLOW in model/cutover.sh keeps it found): the renewal's record
 * write applies, its shadow follow lands after the old lease, a Powertools
 * instance claimed the key in between: the follow is refused, Renew reports
 * the lease renewed, the owner's BeginExternal (MarkExternal, its follow
 * refused as well) succeeds and the external call runs beside Powertools'
 * effect. Reproduced over the test endpoint by
 * TestPowertoolsShadowTakenBeforeTheFollow (branch cutmodel-c2, with the fix).
 *
 * Simplifications: one clock, no
 * skew (shadowClaimValues rounds down, so lambdaidem never finds K free
 * earlier than Powertools); lease = hold (a standard owner); the window stays
 * open; expirations (TTL) lie past TMAX except where the model says so; no
 * optimistic commit; an external call counts as the effect when dispatched.
 *
 * Properties:
 *   (p1) effects: a second effect of the operation only after a Powertools
 *        instance stopped between its effect and its completion write (by
 *        design, counted apart): assert at every effect.
 *   (p2) every replay (by either implementation) returns the answer of an
 *        effect that ran.
 *   (p3) a Powertools instance never answers "in progress" from the shadow of
 *        a lambdaidem owner that released it (the release's follow ran).
 */

#ifndef NP
#define NP 2          /* Powertools instances */
#endif
#ifndef NL
#define NL 2          /* lambdaidem attempts */
#endif
#ifndef TMAX
#define TMAX 5
#endif
#ifndef FAULTS
#define FAULTS 1
#endif
#ifndef RENEWS
#define RENEWS 1      /* renewals per lambdaidem attempt */
#endif
#ifndef EXTERNAL
#define EXTERNAL 1    /* 1: a lambdaidem attempt may make an external call (BeginExternal) */
#endif
#define PD 2          /* Powertools: in_progress_expiration = claim + remaining time */
#define H 2           /* lambdaidem: hold (= lease) = claim or renewal + H */
#define BIG 100       /* an expiration past the bound (Powertools' 1 h, lambdaidem's retention) */
#define HELD 120      /* shadowHeldUntil (2100) */

#define NONE 0
#define INPROG 1
#define DONE 2
#define UNKNOWN 3

/* goals: -DGOAL=<id> turns one into an assertion spin must violate */
#define G_PT_REPLAYS_L 1     /* a Powertools instance replays a lambdaidem outcome (the shadow's data) */
#define G_L_FROM_PT 2        /* a lambdaidem answer from a Powertools record (COMPLETED) */
#define G_PT_INPROG_SHADOW 3 /* Powertools answers in progress from a lambdaidem shadow */
#define G_L_INPROG_PT 4      /* lambdaidem answers in progress from a Powertools record */
#define G_PT_DUP 5           /* the by-design duplicate: an effect after a Powertools crash after its effect */
#define G_SHADOW_LOST 6      /* a lambdaidem commit refused by the shadow's fence (Powertools took the key) */
#ifdef GOAL
bit goalReached;
#define REACH(id, cond) if :: GOAL == id && (cond) -> goalReached = 1; assert(!goalReached) :: else fi
#else
#define REACH(id, cond) skip
#endif

byte now;
byte faults;

/* R: lambdaidem's record */
byte rst;           /* NONE, INPROG, DONE, UNKNOWN */
byte rtok;          /* owner: 1 + j */
byte rhold;
bit rext;           /* external mark */
byte rans;          /* the stored outcome: answer id */

/* K: the item under the Powertools key */
byte kst;           /* NONE, INPROG, DONE */
byte kexp;          /* expiration (seconds) */
byte kipe;          /* in_progress_expiration (ms); 0: absent */
bit kshadow;        /* lambdaidem_shadow_of present (lambdaidem's shadow of R) */
byte ktok;          /* the shadow's attempt token (1 + j) */
byte kans;          /* data: answer id */

/* answers: Powertools instance i answers i + 1, lambdaidem j answers NP + 1 + j */
byte effects;
bit effDone[NP + NL + 1];
bit pEff[NP];       /* instance i ran its effect */
bit pComp[NP];      /* instance i wrote its completion */
byte pDl[NP];       /* instance i's deadline (its in_progress_expiration) */
bit lReleased[NL];  /* attempt j's release followed on the shadow */

/* an earlier effect whose Powertools instance stopped before completing */
inline allowedDup(n) {
	n = 0;
	for (ii : 0 .. NP - 1) {
		if :: pEff[ii] && !pComp[ii] && now > pDl[ii] -> n++ :: else fi
	}
}

inline effect(id) {
	allowedDup(nd);
	REACH(G_PT_DUP, effects > 0 && nd > 0);
	assert(effects <= nd);   /* (p1) */
	effects++;
	effDone[id] = 1
}

/* Powertools' claim condition (and the first three clauses of shadowClaimCondition) */
#define ptClaimable (kst == NONE || kexp < now || (kst == INPROG && kipe != 0 && kipe < now))
/* powertools.Judge on K at now */
#define judgedAbsent (kst == NONE || kexp < now || (kst == INPROG && kipe != 0 && kipe < now))

#ifdef MUT_SHADOW_COND
#define shadowClaimOK true
#else
#define shadowClaimOK (ptClaimable || kshadow)   /* shadowClaimCondition */
#endif
#ifdef MUT_COMMIT_NOFENCE
#define shadowFenceOK true
#else
#define shadowFenceOK (kshadow && ktok == me + 1)  /* shadowFenceCondition */
#endif

proctype Powertools(byte i) {
	byte nd; byte ii;
	byte me = i + 1;
claim:
	/* BasePersistenceLayer.save_inprogress: PutItem, attribute_not_exists(id)
	 * OR expiration < now OR (status = INPROGRESS AND in_progress_expiration < now_ms) */
	atomic {
		if
		:: ptClaimable ->
			kst = INPROG; kexp = BIG; kipe = now + PD; kshadow = 0; ktok = 0; kans = 0;
			pDl[i] = now + PD
		:: else ->
			/* refused: the old item (ALL_OLD) judged */
			if
			:: kst == DONE ->
				REACH(G_PT_REPLAYS_L, kans > NP);
				assert(effDone[kans]);      /* (p2) */
				goto end
			:: else ->
				REACH(G_PT_INPROG_SHADOW, kshadow);
				assert(!(kshadow && ktok != 0 && lReleased[ktok - 1]));  /* (p3) */
				goto end
			fi
		fi
	}
	/* the handler: its effect, or an error (then DeleteItem) */
	if
	:: atomic { now <= pDl[i] -> effect(me); pEff[i] = 1 }
		/* completion: UpdateItem SET data, status = COMPLETED, expiration: unconditional */
		atomic { now <= pDl[i] -> kst = DONE; kexp = BIG; kipe = 0; kshadow = 0; ktok = 0; kans = me; pComp[i] = 1 }
	:: atomic { now <= pDl[i] -> kst = NONE; kexp = 0; kipe = 0; kshadow = 0; ktok = 0; kans = 0 }
	fi;
end:
	skip
}

proctype Lambdaidem(byte j) {
	byte nd; byte ii;
	byte me = j;
	byte ans = NP + 1 + j;
	byte dl;
	byte newdl;
	byte renews = 0;
	bit ext = 0;
	/* Store.claim: claimCondition / replaceCondition: absent, or in progress past
	 * its hold and not external (the gate's OwnerMayRun) */
	atomic {
		if
		:: rst == NONE || (rst == INPROG && !rext && rhold < now) ->
			rst = INPROG; rtok = me + 1; rhold = now + H; rext = 0; dl = now + H
		:: else ->
			/* op.existing -> Judge on R */
			if
			:: rst == DONE -> assert(effDone[rans]); goto end   /* (p2) */
			:: else -> goto end                                  /* in progress */
			fi
		fi
	}
	/* claimBeside: PutItem of the shadow, shadowClaimCondition, ipe = holdOf(c) */
	atomic {
		now <= dl;
		if
		:: shadowClaimOK ->
			kst = INPROG; kexp = BIG; kipe = rhold; kshadow = 1; ktok = me + 1; kans = 0;
			if
			:: faults < FAULTS -> faults++; goto giveback   /* applied, answer lost: an error */
			:: true
			fi
		:: else -> goto refused
		:: faults < FAULTS -> faults++; goto giveback   /* an error, not applied */
		fi
	}
	goto handler;
refused:
	/* s.release(R) (fenceCondition, no follow), then powertoolsAnswer(K) */
	atomic {
		if :: rst == INPROG && rtok == me + 1 -> rst = NONE; rtok = 0 :: else fi
	}
answer:
	atomic {
		if
		:: kst == DONE && !(kexp < now) ->
			REACH(G_L_FROM_PT, !kshadow);
			assert(effDone[kans])                   /* (p2) */
		:: kst == INPROG && !judgedAbsent ->
			REACH(G_L_INPROG_PT, !kshadow)
		:: else -> skip   /* absent at now: the core claims again (not modelled) */
		fi
	}
	goto end;
giveback:
	/* op.abandon -> Store.Release: R fenced, then the shadow fenced */
	atomic { now <= dl; if :: rst == INPROG && rtok == me + 1 -> rst = NONE; rtok = 0 :: else -> goto end fi }
	goto follow_release;
handler:
	do
	:: renews < RENEWS && !ext ->
		/* Store.Renew: renewCondition, fenced */
		atomic { now <= dl; renews++;
			if :: rst == INPROG && rtok == me + 1 -> rhold = now + H; newdl = now + H :: else -> goto end fi }
		/* followShadow(shadowRenewed): shadowRenewUpdate fenced on
		 * shadowFenceCondition. Since 43f48cb an error fails the renewal (Renew
		 * returns it: the owner keeps its old lease); a refusal (fenced: the
		 * shadow is not this attempt's) is not an error: the renewal is done. */
		atomic { now <= newdl;   /* sent at once, applied any time later (the SDK's retries) */
			if
			:: faults < FAULTS -> faults++          /* an error: the renewal failed, the old lease stays */
#ifdef MUT_RENEW_ERROR
				; dl = newdl                     /* before 43f48cb: the error dropped */
#endif
			:: else ->
				if
				:: shadowFenceOK -> kipe = newdl; dl = newdl
				:: else ->
#ifndef MUT_FENCED_FOLLOW
					skip                     /* errShadowTaken: Renew answers false, the lease is lost */
#else
					dl = newdl               /* finding C2 as first built: refused, renewed anyway */
#endif
				fi
			fi }
	:: EXTERNAL && !ext ->
		/* Attempt.BeginExternal -> Store.MarkExternal: runningCondition */
		atomic { now <= dl;
			if :: rst == INPROG && rtok == me + 1 -> rext = 1; ext = 1 :: else -> goto end fi }
		/* followShadow(shadowHeld): shadowHoldUpdate fenced */
		atomic { now <= dl;
			if
			:: faults < FAULTS -> faults++          /* an error: MarkExternal returns it (43f48cb) */
#ifndef MUT_HELD_ERROR
				; goto heldfailed
#endif
			:: else -> if :: shadowFenceOK -> kipe = 0; kexp = HELD
				:: else ->
#ifndef MUT_FENCED_FOLLOW
					goto heldfailed          /* errShadowTaken: MarkExternal answers false */
#else
					skip                     /* finding C2 as first built: the call is made */
#endif
				fi
			fi }
		/* the external call: the effect */
		atomic { now <= dl; effect(ans) }
	:: break
	od;
	if
	:: !ext ->
		/* handler error: op.abandon -> Store.Release */
		atomic { now <= dl; if :: rst == INPROG && rtok == me + 1 -> rst = NONE; rtok = 0 :: else -> goto end fi }
		goto follow_release
	:: true
	fi;
	goto commit;
heldfailed:
	/* BeginExternal fails (MarkExternal returned the shadow's error): no call
	 * is made and the owner gives the record back (Release: R, then the
	 * shadow) */
	atomic { now <= dl; if :: rst == INPROG && rtok == me + 1 -> rst = NONE; rtok = 0 :: else -> goto end fi }
	goto follow_release;
commit:
	/* commitBeside: TransactWriteItems {R fenceCondition, business write, K Put shadowFenceCondition} */
	atomic {
		now <= dl;
		if
		:: !(rst == INPROG && rtok == me + 1) -> goto end   /* ErrLeaseLost */
		:: else
		fi;
		if
		:: shadowFenceOK ->
			rst = DONE; rans = ans;
			if :: !ext -> effect(ans) :: else fi;
#ifndef MUT_COMMIT_NOSHADOW
			kst = DONE; kexp = BIG; kipe = 0; kshadow = 1; ktok = me + 1; kans = ans;
#endif
			goto end
		:: else -> REACH(G_SHADOW_LOST, true)
		fi
	}
	/* the shadow's condition failed: s.release(R), then powertoolsAnswer */
	atomic {
		if :: rst == INPROG && rtok == me + 1 -> rst = NONE; rtok = 0 :: else fi
	}
	goto answer;
follow_release:
	/* followShadow(shadowReleased): DeleteItem fenced on shadowFenceCondition */
	atomic {
		if
		:: faults < FAULTS -> faults++          /* its error dropped */
		:: else ->
#ifndef MUT_RELEASE_NOFOLLOW
			if :: shadowFenceOK -> kst = NONE; kexp = 0; kipe = 0; kshadow = 0; ktok = 0; kans = 0 :: else fi;
#endif
			lReleased[j] = 1
		fi
	}
end:
	skip
}

active proctype Env() {
	byte i;
	atomic {
		for (i : 0 .. NP - 1) { run Powertools(i) }
		for (i : 0 .. NL - 1) { run Lambdaidem(i) }
	}
	do
	:: now < TMAX -> now++
	:: now == TMAX -> break
	od
}
