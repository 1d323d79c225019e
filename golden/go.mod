// The golden files are expected chronosgen output; they only compile beside
// the input packages in testdata/gen (TestGoldenCompiles puts them there).
// This go.mod makes golden/ a module of its own so that the main module's
// ./... (go vet, go test, go build) leaves them alone.
module github.com/chronos-go/chronos/golden

go 1.26.0
