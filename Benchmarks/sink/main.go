// sink is a loopback HTTP server that reads and discards request bodies, answering
// {"received": N}. Used as the peer for upload benchmarks. Usage: sink 127.0.0.1:PORT
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
)

func main() {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"received\": %d}", n)
	})
	if err := http.ListenAndServe(os.Args[1], handler); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
