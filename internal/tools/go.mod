module github.com/lambdaidem/lambdaidem/internal/tools

go 1.26
