module github.com/toolfold/toolfold

go 1.25.0

require (
	github.com/dlclark/regexp2/v2 v2.5.1 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/tiktoken-go/tokenizer v0.10.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/text v0.14.0 // indirect
)
