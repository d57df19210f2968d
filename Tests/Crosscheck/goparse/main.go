// goparse reads multipart/form-data bodies with Go's standard mime/multipart package, as a
// Go server's r.MultipartReader() would, and prints one canonical JSON line per body:
// [{"name","filename","content_type","size","sha256"}...] or {"error": "..."}.
//
// Usage: goparse CONTENT_TYPE BODY_FILE [CONTENT_TYPE BODY_FILE ...]
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"os"
)

type part struct {
	Name        string  `json:"name"`
	Filename    *string `json:"filename"`
	ContentType *string `json:"content_type"`
	Size        int64   `json:"size"`
	SHA256      string  `json:"sha256"`
}

func parse(contentType, path string) (interface{}, error) {
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, fmt.Errorf("content type: %v", err)
	}
	if mediaType != "multipart/form-data" {
		return nil, fmt.Errorf("media type %q", mediaType)
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	reader := multipart.NewReader(file, params["boundary"])
	parts := []part{}
	for {
		p, err := reader.NextPart()
		if err == io.EOF {
			return parts, nil
		}
		if err != nil {
			return nil, err
		}
		hash := sha256.New()
		size, err := io.Copy(hash, p)
		if err != nil {
			return nil, err
		}
		out := part{Name: p.FormName(), Size: size, SHA256: hex.EncodeToString(hash.Sum(nil))}
		// FileName() is what a Go server sees; it is empty when there is no filename parameter.
		if _, disposition, err := mime.ParseMediaType(p.Header.Get("Content-Disposition")); err == nil {
			if _, ok := disposition["filename"]; ok {
				name := p.FileName()
				out.Filename = &name
			}
		}
		if values, ok := p.Header["Content-Type"]; ok && len(values) > 0 {
			value := values[0]
			out.ContentType = &value
		}
		parts = append(parts, out)
	}
}

func main() {
	args := os.Args[1:]
	if len(args) == 0 || len(args)%2 != 0 {
		fmt.Fprintln(os.Stderr, "usage: goparse CONTENT_TYPE BODY_FILE [...]")
		os.Exit(64)
	}
	encoder := json.NewEncoder(os.Stdout)
	for i := 0; i < len(args); i += 2 {
		result, err := parse(args[i], args[i+1])
		if err != nil {
			result = map[string]string{"error": err.Error()}
		}
		if err := encoder.Encode(result); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
