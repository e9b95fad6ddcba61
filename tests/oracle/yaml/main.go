// yaml-oracle: how Kubernetes reads YAML. Reads a JSON array of YAML texts on standard input and writes, for each,
// what sigs.k8s.io/yaml.YAMLToJSON (kubectl's and apimachinery's YAML decoding: go-yaml v2 into untyped values,
// converted to JSON) makes of it: {"json": <the JSON>} or {"error": "..."}. tests/unit/test_yamlio.py compares
// kubectl_dra.yamlio's loader with it.
package main

import (
	"encoding/json"
	"os"

	"sigs.k8s.io/yaml"
)

type result struct {
	JSON  json.RawMessage `json:"json,omitempty"`
	Error string          `json:"error,omitempty"`
}

func main() {
	var texts []string
	if err := json.NewDecoder(os.Stdin).Decode(&texts); err != nil {
		os.Stderr.WriteString("yaml-oracle: " + err.Error() + "\n")
		os.Exit(2)
	}
	out := make([]result, len(texts))
	for i, t := range texts {
		j, err := yaml.YAMLToJSON([]byte(t))
		if err != nil {
			out[i].Error = err.Error()
		} else {
			out[i].JSON = j
		}
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		os.Exit(2)
	}
}
