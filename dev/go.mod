module github.com/lambdaidem/lambdaidem/dev

go 1.26.0

// Development against the modules in this repository. This module is never
// published (docs/modules.md): it holds the benchmarks, chaos, the end-to-end
// suite and its stack, the demo, the integration tests and build tools.
replace github.com/lambdaidem/lambdaidem => ../

replace github.com/lambdaidem/lambdaidem/ddbtest => ../ddbtest

replace github.com/lambdaidem/lambdaidem/examples => ../examples

require (
	github.com/Admiral-Piett/goaws v0.4.5
	github.com/anishathalye/porcupine v1.3.1
	github.com/aws/aws-lambda-go v1.55.1
	github.com/aws/aws-sdk-go-v2 v1.48.0
	github.com/aws/aws-sdk-go-v2/config v1.33.18
	github.com/aws/aws-sdk-go-v2/credentials v1.21.0
	github.com/aws/aws-sdk-go-v2/service/cloudformation v1.84.0
	github.com/aws/aws-sdk-go-v2/service/dynamodb v1.74.0
	github.com/aws/aws-sdk-go-v2/service/dynamodbstreams v1.48.0
	github.com/aws/aws-sdk-go-v2/service/kinesis v1.58.0
	github.com/aws/aws-sdk-go-v2/service/sqs v1.53.0
	github.com/aws/smithy-go v1.28.9
	github.com/lambdaidem/lambdaidem v0.2.0
	github.com/lambdaidem/lambdaidem/ddbtest v0.2.0
	github.com/lambdaidem/lambdaidem/examples v0.0.0-00010101000000-000000000000
	github.com/lambdaidem/lambdaidem/kmsseal v0.2.0
	github.com/lambdaidem/lambdaidem/outboxaws v0.2.0
	github.com/sirupsen/logrus v1.9.4
	golang.org/x/image v0.30.0
	golang.org/x/mod v0.42.0
	gonum.org/v1/plot v0.17.0
)

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.2.0 // indirect
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	git.sr.ht/~sbinet/gg v0.7.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream v1.7.27 // indirect
	github.com/aws/aws-sdk-go-v2/feature/ec2/imds v1.20.9 // indirect
	github.com/aws/aws-sdk-go-v2/internal/configsources v1.5.12 // indirect
	github.com/aws/aws-sdk-go-v2/internal/endpoints/v2 v2.8.12 // indirect
	github.com/aws/aws-sdk-go-v2/internal/v4a v1.5.12 // indirect
	github.com/aws/aws-sdk-go-v2/service/eventbridge v1.55.11 // indirect
	github.com/aws/aws-sdk-go-v2/service/internal/accept-encoding v1.13.25 // indirect
	github.com/aws/aws-sdk-go-v2/service/internal/endpoint-discovery v1.13.12 // indirect
	github.com/aws/aws-sdk-go-v2/service/internal/presigned-url v1.14.12 // indirect
	github.com/aws/aws-sdk-go-v2/service/kms v1.63.0 // indirect
	github.com/aws/aws-sdk-go-v2/service/signin v1.13.1 // indirect
	github.com/aws/aws-sdk-go-v2/service/sns v1.48.0 // indirect
	github.com/aws/aws-sdk-go-v2/service/sso v1.39.5 // indirect
	github.com/aws/aws-sdk-go-v2/service/ssooidc v1.44.5 // indirect
	github.com/aws/aws-sdk-go-v2/service/sts v1.52.0 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	github.com/gorilla/mux v1.8.0 // indirect
	github.com/truora/minidyn v0.8.2 // indirect
	golang.org/x/sys v0.42.0 // indirect
	golang.org/x/text v0.28.0 // indirect
)

replace github.com/lambdaidem/lambdaidem/outboxaws => ../outboxaws

replace github.com/lambdaidem/lambdaidem/kmsseal => ../kmsseal
