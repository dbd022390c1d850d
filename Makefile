# lambdaidem — every target runs on a fresh machine with only Go (and Node.js
# for the CDK) installed. `make demo` is the main job; `make test` the tests.

GO      ?= go
ARCHES  ?= arm64 amd64
EXAMPLES = api-gateway sqs function-url relay stream

# The Go modules (see docs/modules.md): the library at the root, which requires only
# what production code imports; the published nested modules (the test kit,
# kmsseal, the command); and two unpublished ones: examples (what users copy)
# and dev (benchmarks, chaos, the end-to-end suite, the demo, integration tests,
# tools). cdk/ is one more, tested on its own (it needs Node.js).
MODULES = . ddbtest kmsseal cmd/lambdaidem outboxaws examples dev
# The published modules, in dependency order (dev/release/published, which the
# release scripts read too): each is tagged at a release (vX.Y.Z at the root,
# <folder>/vX.Y.Z for a nested one).
PUBLISHED = $(shell cat dev/release/published)

# The modules build against each other's working trees through go.work. In the
# root folder a workspace's ./... would also match every nested module, so the
# root module's own steps run with GOWORK=off (it requires no local module).
IN_MODULE = if [ "$$m" = . ]; then export GOWORK=off; fi

# The only modules the library's go.mod may require (% matches a suffix): the
# Lambda runtime, the AWS SDK's core and DynamoDB client, smithy-go, and the
# SDK's internal modules those pull in.
ROOT_ALLOW = github.com/aws/aws-lambda-go github.com/aws/aws-sdk-go-v2 \
             github.com/aws/aws-sdk-go-v2/service/dynamodb github.com/aws/smithy-go \
             github.com/aws/aws-sdk-go-v2/internal/% github.com/aws/aws-sdk-go-v2/service/internal/%

# Pinned analysis tools, each built once into build/tools/<name>-<version>/.
STATICCHECK_VERSION = v0.8.2
APIDIFF_VERSION     = v0.0.0-20261113113407-e3970619a1a4
STATICCHECK = $(CURDIR)/build/tools/staticcheck-$(STATICCHECK_VERSION)/staticcheck
APIDIFF     = $(CURDIR)/build/tools/apidiff-$(APIDIFF_VERSION)/apidiff

.PHONY: all test test-dynoxide test-embedded fmt-check vet lint tools api-check unit mod-check release release-check download cli-test cdk-test e2e demo run bench bench-results bench-managed chaos fuzz fuzz-short build synth deploy clean localstack-up localstack-deploy localstack-e2e localstack-down aws-verify aws-verify-local aws-clean model model-small model-full model-mutate model-replay model-cutover model-outbox model-relay-replay mutate

all: test

## test: formatting, the library's dependency allow-list, vet and the race-enabled
## tests of every module (the lambdaidem command's included), the CDK tests, the
## end-to-end suite under the Lambda RIE, every fuzz target for 2s, the record
## protocol model at its small bound (spin: apt-get install -y spin), and every
## DynamoDB-touching suite again in the second world (test-dynoxide)
test: fmt-check mod-check vet lint api-check fuzz-short model-small unit cdk-test e2e aws-verify-local test-dynoxide

## test-dynoxide: every DynamoDB-touching suite (the tests of each package whose tests link ddbtest, and
## aws-verify's LOCAL mode) in the second world: Dynoxide behind ddbtest's proxy (LAMBDAIDEM_WORLD=dynoxide;
## the binary from $DYNOXIDE, else dev/worlds after npm ci there, else PATH). Without a binary it says in one
## line that the second world is skipped; CI requires it. test-embedded: the same suites in the first world.
test-dynoxide:
	@dev/worlds/test.sh dynoxide
test-embedded:
	@dev/worlds/test.sh embedded

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	@for m in $(MODULES); do echo "go vet ($$m)"; (cd $$m && $(IN_MODULE) && $(GO) vet ./...) || exit 1; done

unit:
	@for m in $(MODULES); do echo "go test -race ($$m)"; (cd $$m && $(IN_MODULE) && $(GO) test -race -count=1 ./...) || exit 1; done

## tools: the pinned staticcheck and apidiff
tools: $(STATICCHECK) $(APIDIFF)
$(STATICCHECK):
	GOBIN=$(@D) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
$(APIDIFF):
	GOBIN=$(@D) $(GO) install golang.org/x/exp/cmd/apidiff@$(APIDIFF_VERSION)

## lint: staticcheck (pinned) over every module, e2e's tagged files included
lint: $(STATICCHECK)
	@for m in $(MODULES); do echo "staticcheck ($$m)"; (cd $$m && $(IN_MODULE) && $(STATICCHECK) ./...) || exit 1; done
	cd dev && $(STATICCHECK) -tags e2e ./e2e/...

## api-check: the library's exported API against the newest release tag (v*) behind HEAD: fails on an
## incompatible change (see docs/compatibility.md). Without a tag there is nothing to compare.
api-check: $(APIDIFF)
	@export GOWORK=off; base=$$(git describe --tags --abbrev=0 --match 'v[0-9]*' HEAD 2>/dev/null); \
	if [ -z "$$base" ]; then echo "api-check: no release tag (v*) yet: nothing to compare the API with"; exit 0; fi; \
	tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	git archive "$$base" | tar -x -C "$$tmp" && \
	(cd "$$tmp" && $(APIDIFF) -m -w "$$tmp/base.api" github.com/lambdaidem/lambdaidem) && \
	$(APIDIFF) -m -w "$$tmp/head.api" github.com/lambdaidem/lambdaidem && \
	out=$$($(APIDIFF) -m -incompatible "$$tmp/base.api" "$$tmp/head.api") && \
	if [ -n "$$out" ]; then echo "api-check: incompatible with $$base:"; echo "$$out"; exit 1; fi; \
	echo "api-check: compatible with $$base"

## mod-check: the library's go.mod requires nothing outside ROOT_ALLOW; no published module
## replaces anything; every module's go.mod and go.sum are tidy (dev/release/tidy.sh: tidy
## with the local modules as go.work has them); every go.mod in the repository is in MODULES
## and in go.work, whose module graph loads
mod-check:
	@for d in $$(git ls-files '*go.mod' | xargs -n1 dirname); do case " $(MODULES) cdk " in *" $$d "*) ;; \
	  *) echo "$$d/go.mod: a module missing from MODULES in the Makefile (its tests would not run)"; exit 1;; esac; \
	  $(GO) work edit -json | grep -q "\"DiskPath\": \"$$(if [ $$d = . ]; then echo .; else echo ./$$d; fi)\"" || \
	  { echo "$$d: a module missing from go.work (go work use ./$$d)"; exit 1; }; done
	@for m in $(PUBLISHED); do if grep -q '^replace' $$m/go.mod; then \
	  echo "$$m/go.mod: a published module must not use replace (go install pkg@version refuses it; go.work joins the modules)"; exit 1; fi; done
	@$(GO) list -m all >/dev/null || { echo "go.work: the workspace's module graph does not load (a replace line for a version some module requires?)"; exit 1; }
	@if command -v git >/dev/null && git rev-parse --git-dir >/dev/null 2>&1 && ! git diff --quiet -- go.work.sum; then \
	  echo "go.work.sum: loading the workspace's module graph added sums (git diff go.work.sum): commit them, or a fresh clone's build rewrites a tracked file"; exit 1; fi
	@dev/release/tidy.sh -check $(MODULES) cdk
	@reqs=$$(awk '/^require \(/{b=1;next} b&&/^\)/{b=0;next} b&&NF{print $$1} /^require [^(]/{print $$2}' go.mod); \
	bad=$$(for r in $$reqs; do ok=; for a in $(ROOT_ALLOW); do case $$a in \
	  *%) case $$r in $${a%\%}*) ok=1;; esac;; *) [ "$$r" = "$$a" ] && ok=1;; esac; done; [ -n "$$ok" ] || echo $$r; done); \
	if [ -n "$$bad" ]; then echo "go.mod requires modules outside the allow-list (ROOT_ALLOW in the Makefile):"; echo "$$bad"; \
	  echo "production code may import only these; put test and tool dependencies in a nested module (docs/modules.md)"; exit 1; fi

## release: in a clone, the release commit and one tag per published module at VERSION, nothing
## pushed (docs/modules.md, "Releasing"): make release VERSION=v0.1.0
release:
	@test -n "$(VERSION)" || { echo "usage: make release VERSION=vX.Y.Z"; exit 1; }
	dev/release/release.sh $(VERSION)

## release-check: the released modules as a user gets them, from a module proxy in a folder and
## from git, with an empty module cache (VERSION, else the release tag on HEAD, else a throwaway
## release in a clone)
release-check:
	dev/release/check.sh $(VERSION)

## download: every module's dependencies (what .ci/run fetches on a fresh machine)
# (the modules of the packages and their tests, whose sums the modules' go.sum files hold: go mod download
# would fetch every module of the graph and write their sums into the tracked go.work.sum)
download:
	@for m in $(MODULES) cdk; do (cd $$m && $(IN_MODULE) && $(GO) list -deps -test ./... >/dev/null) || exit 1; done

## cli-test: the lambdaidem command (its own module) alone, against the in-process DynamoDB endpoint
cli-test:
	cd cmd/lambdaidem && $(GO) vet ./... && $(GO) test -race -count=1 ./...

cdk-test:
	@command -v node >/dev/null || { echo "node is required by the CDK's Go bindings (jsii)"; exit 1; }
	cd cdk && $(GO) vet ./... && $(GO) test -count=1 ./...

## demo: the main job, narrated, on the embedded stack (only Go needed; Linux)
demo:
	@echo "make demo: compiling the demo (on a first run the go command downloads modules first: a few minutes, silent but for 'go: downloading')"
	cd dev && $(GO) run ./demo

## run: the payments API on http://127.0.0.1:8080 over an in-process DynamoDB
run:
	cd examples && $(GO) run ./api-gateway/devserver

## e2e: the examples under the Lambda Runtime Interface Emulator, end to end (Linux)
e2e:
	cd dev && $(GO) vet -tags e2e ./e2e/...
	cd dev && $(GO) test -race -tags e2e -count=1 -timeout 10m ./e2e/...

## localstack-*: the same suite against the CDK app deployed to LocalStack (needs Docker; see localstack/README.md)
localstack-up:     ; ./localstack/up.sh
localstack-deploy: ; ./localstack/deploy.sh
localstack-e2e:    ; ./localstack/e2e.sh
localstack-down:   ; ./localstack/down.sh

## bench: DynamoDB round trips and latency side by side with Powertools (TypeScript), CPU and
## allocations per invocation, cold start under the RIE -> build/bench/RESULTS.md and
## build/bench/latency.png (nothing tracked changes; make bench-results publishes them)
RIE_VERSION = v0.0.0-20261030222936-bef5c4ba774d
bench:
	@command -v node >/dev/null || { echo "node is required for the Powertools peer"; exit 1; }
	cd dev/bench/powertools && npm ci --no-audit --no-fund
	@rie="$$($(GO) env GOPATH)/bin/aws-lambda-rie"; test -x "$$rie" || \
	  $(GO) install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$(RIE_VERSION)
	@mkdir -p build/bench
	cd dev && $(GO) run ./bench/cmd/bench -root .. -rie "$$($(GO) env GOPATH)/bin/aws-lambda-rie" \
	  -out build/bench/RESULTS.md -chart build/bench/latency.png

## bench-results: make bench, then its results replace the tracked dev/bench/RESULTS.md and latency.png
## (and soak.png after make bench-managed; commit them with the machine and load the run saw)
bench-results: bench
	cp build/bench/RESULTS.md dev/bench/RESULTS.md
	cp build/bench/latency.png dev/bench/latency.png
	if test -f build/bench/soak.png; then cp build/bench/soak.png dev/bench/soak.png; fi

## bench-managed: one Lambda Managed Instances process (64 concurrent invocations, 5 ms per
## DynamoDB call: latency against bare, calls, CPU, renewals) and a 10-minute soak (heap and
## goroutines) -> its section of build/bench/RESULTS.md (started from the tracked one if make bench
## has not run) and build/bench/soak.png; nothing tracked changes (a short soak runs in make test)
bench-managed:
	@mkdir -p build/bench
	test -f build/bench/RESULTS.md || cp dev/bench/RESULTS.md build/bench/RESULTS.md
	cd dev/bench && $(GO) run ./cmd/managed -out ../../build/bench/RESULTS.md -chart ../../build/bench/soak.png

## chaos: the long randomized fault-injection run (~20 min on a shared 2-core machine; a bounded run is part of make test)
chaos:
	cd dev/chaos && $(GO) run ./cmd/chaos -ops 20000 -seed $${CHAOS_SEED:-42} -powertools 20 -outbox

## fuzz: each fuzz target for FUZZTIME (seed corpora run in make test)
FUZZTIME ?= 10s
fuzz:
	$(GO) test ./dynamostore -run '^$$' -fuzz '^FuzzDecodeRecord$$' -fuzztime $(FUZZTIME)
	$(GO) test ./lambdaidem/apigw -run '^$$' -fuzz '^FuzzKeyAndFingerprint$$' -fuzztime $(FUZZTIME)
	$(GO) test ./lambdaidem/apigw -run '^$$' -fuzz '^FuzzRequestParsing$$' -fuzztime $(FUZZTIME)
	$(GO) test ./lambdaidem/internal/httpengine -run '^$$' -fuzz '^FuzzFingerprintMeansIntent$$' -fuzztime $(FUZZTIME)
	$(GO) test ./lambdaidem/apigw -run '^$$' -fuzz '^FuzzFingerprintBodyFields$$' -fuzztime $(FUZZTIME)
	$(GO) test ./lambdaidem/httpidem -run '^$$' -fuzz '^FuzzRequestMapping$$' -fuzztime $(FUZZTIME)
	$(GO) test ./lambdaidem/sqsbatch -run '^$$' -fuzz '^FuzzBatch$$' -fuzztime $(FUZZTIME)
	$(GO) test ./lambdaidem/streambatch -run '^$$' -fuzz '^FuzzKinesisBatch$$' -fuzztime $(FUZZTIME)
	$(GO) test ./lambdaidem/powertools -run '^$$' -fuzz '^FuzzKeyAndData$$' -fuzztime $(FUZZTIME)

## model: the record protocol model (model/record.pml) with spin at its renewals bound, the
## exhaustive two-attempt and Managed-Instances bounds, a swarm of 4 seeded runs at the full bound, every reachability goal at its bound (each must be reached, model/goals.sh), every
## guard switched off in turn at its own bound (each must give a counterexample), the replay of sampled and aimed schedules against the Go code,
## the cutover and outbox models and the relay replay (see model/README.md for bounds, state counts and times)
model: model-small
	model/check.sh renewals
	model/check.sh two
	GOALS_BOUND=two model/goals.sh TAKEOVER MARK_UNKNOWN
	model/check.sh managed
	GOALS_BOUND=managed model/goals.sh RENEW_CAPPED TAKEOVER SECOND_CLAIM FENCED_OUT
	model/check.sh full
	model/goals.sh
	$(MAKE) model-mutate
	$(MAKE) model-replay
	$(MAKE) model-cutover
	$(MAKE) model-outbox
	$(MAKE) model-relay-replay

## model-full: a larger swarm at the full bound (two concurrent attempts with the operator): 16
## seeded runs of 5 min (40 min on 2 cores), each at hash factor 16 or more (make model runs 4 of 2 min)
model-full:
	MODEL_RUNS=16 MODEL_MINUTES=5 model/check.sh full,w=33

## model-replay: 300 schedules sampled from the model replayed against the Go code over the
## DynamoDB test endpoint (dev/model; make test's unit run replays 12)
MODEL_SCHEDULES ?= 300
MODEL_AIMED ?= 3
model-replay:
	cd dev && MODEL_SCHEDULES=$(MODEL_SCHEDULES) MODEL_AIMED=$(MODEL_AIMED) $(GO) test -count=1 -run 'TestReplaySchedules|TestReplayAimed' ./model/

## model-relay-replay: 1000 spin simulations of the outbox model replayed against two real relays
## over the DynamoDB test endpoint and 5 schedules aimed by pan searches, relay crashes counted per class
## (dev/relaymodel; make test's unit run replays 120 simulations, no aimed search)
RELAYMODEL_SEEDS ?= 1000
model-relay-replay:
	mkdir -p build && cd dev && RELAYMODEL_SEEDS=$(RELAYMODEL_SEEDS) RELAYMODEL_AIMED=1 $(GO) test -count=1 -v -run 'TestReplayRelayCrashes|TestReplayAimed' ./relaymodel/ >../build/relaymodel.log; \
	s=$$?; grep -v -e '^=== RUN' -e '^    --- PASS' ../build/relaymodel.log; exit $$s

## model-cutover: the Powertools cutover model (model/cutover.pml: Powertools instances beside
## lambdaidem owners on one operation inside the window), its goals and mutants (model/cutover.sh)
model-cutover:
	model/cutover.sh

## model-outbox: the outbox model (model/outbox.pml: one key's outbox item, two relays, a
## deduplicating target, key reuse), its findings, goals and mutants (model/outbox.sh)
model-outbox:
	model/outbox.sh

## model-small: the model at the bound make test runs (fails without spin, saying how to install it)
model-small:
	model/check.sh small

## model-mutate: every guard of the model switched off in turn, each at its own bound
model-mutate:
	model/mutate.sh

## mutate: each mutation of the Go guards listed in dev/mutate/mutants.txt applied in turn
## (go test -overlay); every one must be killed by a behavioural test (not in make test)
mutate:
	cd dev && GO=$(GO) $(GO) run ./mutate

# fuzz-short: every fuzz target briefly, as part of make test. A count of
# executions, not a duration: Go 1.26's fuzz coordinator can fail a run with a
# bare "context deadline exceeded" (no failing input) when -fuzztime's
# wall-clock deadline races a busy worker (golang/go#75804, fixed in Go 1.27);
# a count has no such deadline. Seen here on FuzzBatch in a CI rehearsal.
FUZZ_SHORT ?= 10000x
fuzz-short:
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZ_SHORT)

## build: Lambda bootstrap zips for provided.al2023 (build/<example>-<arch>.zip)
build:
	@for ex in $(EXAMPLES); do for arch in $(ARCHES); do \
	  echo "build $$ex $$arch"; \
	  (cd examples && CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w' \
	    -o $(CURDIR)/build/$$ex/$$arch/bootstrap ./$$ex) || exit 1; \
	  (cd dev && $(GO) run ./tools/zipit -o $(CURDIR)/build/$$ex-$$arch.zip $(CURDIR)/build/$$ex/$$arch/bootstrap) || exit 1; \
	done; done

## synth: every stack's CloudFormation template in cdk/cdk.out, without AWS credentials or the CDK CLI
## (SYNTH_CONTEXT: -c key=value pairs; the default lets the payments API synthesize without a JWT
## authorizer, which a deployment refuses unless asked: see cdk/README.md)
# EXAMPLE_ZIPS: the zips of the stacks the app adds only when given their zip (the outbox relay, the
# stream example's ledger, the net/http example's Function URL), for SYNTH_ARCH (default arm64);
# synth and deploy pass them, so that every example make build zips is deployed.
SYNTH_ARCH ?= arm64
EXAMPLE_ZIPS = -c arch=$(SYNTH_ARCH) -c relayZip=../build/relay-$(SYNTH_ARCH).zip \
               -c ledgerZip=../build/stream-$(SYNTH_ARCH).zip -c functionUrlZip=../build/function-url-$(SYNTH_ARCH).zip
SYNTH_CONTEXT ?= -c publicApi=true
synth: build
	cd cdk && $(GO) run . -o cdk.out $(EXAMPLE_ZIPS) $(SYNTH_CONTEXT)
	@ls cdk/cdk.out/*.template.json

## deploy: a real deployment (needs AWS credentials; see cdk/README.md). The payments API needs a JWT
## authorizer: make deploy DEPLOY_CONTEXT='-c jwtIssuer=https://issuer.example.com/ -c jwtAudience=payments'
CDK_CLI ?= npx --yes aws-cdk@2.1148.1
DEPLOY_CONTEXT ?=
deploy: build
	cd cdk && $(CDK_CLI) deploy --all $(EXAMPLE_ZIPS) $(DEPLOY_CONTEXT)

## aws-verify: evidence from real AWS (opt-in; needs credentials, a Region, a CDK-bootstrapped
## account and Node.js): prints what it creates, the cost and time, asks, deploys the CDK app's
## stacks under a unique tag, runs the checks, writes aws-reports/<date>-<region>-<run>.md and
## always tears down (docs/aws-verify.md). AWS_VERIFY_FLAGS: -yes, -region, -chaos-ops, -checks
AWS_VERIFY_FLAGS ?=
# Refuse first: the Region and credentials are checked before anything is built (within seconds, nothing
# written under build/; dev/awsverify's TestMakeRefusesBeforeBuilding), then the zips are built.
aws-verify:
	cd dev && $(GO) run ./awsverify -preflight $(AWS_VERIFY_FLAGS)
	$(MAKE) --no-print-directory build
	cd dev && $(GO) run ./awsverify -cdk-cli '$(CDK_CLI)' $(AWS_VERIFY_FLAGS)

## aws-verify-local: the same command and checks against the in-process DynamoDB endpoint and the
## Lambda RIE, no AWS (part of make test) -> build/aws-verify-local/
aws-verify-local:
	cd dev && $(GO) run ./awsverify -local $(AWS_VERIFY_FLAGS)

## aws-clean: finds the stacks of earlier aws-verify runs by their tag and deletes them (asks first)
aws-clean:
	cd dev && $(GO) run ./awsverify -clean $(AWS_VERIFY_FLAGS)

clean:
	rm -rf build cdk/cdk.out

## powertools-vectors: regenerate lambdaidem/powertools' test vectors: Python's with python3's json and
## hashlib as Powertools Python computes them, TypeScript's with the real Powertools package pinned in
## dev/bench/powertools (npm ci there first)
.PHONY: powertools-vectors
powertools-vectors:
	python3 dev/powertools/vectors.py < lambdaidem/powertools/testdata/cases.json > lambdaidem/powertools/testdata/python.json
	node dev/powertools/vectors.mjs < lambdaidem/powertools/testdata/cases.json > lambdaidem/powertools/testdata/typescript.json
