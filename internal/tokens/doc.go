// Package tokens measures context cost: how many o200k_base tokens a piece of
// text, or a tools/list answer, puts in front of a model.
//
// The tokenizer is github.com/tiktoken-go/tokenizer, whose vocabularies are
// compiled into the binary, so counting never touches the network. The codec
// is built once, on first use, and shared; it is safe for concurrent use.
//
// ToolsCost counts a tools array exactly the way the catalog table in
// testdata/catalogs/README.md was produced (js-tiktoken o200k): the compact
// JSON of the tools/list result {"tools":[...]} as JavaScript's
// JSON.stringify writes it (key order kept, no HTML escaping, JavaScript
// number formatting), so the figures toolfold reports agree to the token
// with the published ones.
package tokens
