// Command zipit writes a Lambda deployment package: a zip holding one
// executable file, stored at the archive's root under its base name with
// mode 0755, as provided.al2023 expects its bootstrap. It exists so that
// `make build` needs nothing but Go.
package main

import (
	"archive/zip"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

func main() {
	out := flag.String("o", "", "zip file to write")
	flag.Parse()
	if *out == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: zipit -o package.zip path/to/bootstrap")
		os.Exit(2)
	}
	if err := write(*out, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "zipit:", err)
		os.Exit(1)
	}
}

func write(out, file string) error {
	src, err := os.Open(file)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(out)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(dst)
	hdr := &zip.FileHeader{Name: filepath.Base(file), Method: zip.Deflate, Modified: time.Unix(0, 0).UTC()}
	hdr.SetMode(0o755)
	w, err := zw.CreateHeader(hdr)
	if err == nil {
		_, err = io.Copy(w, src)
	}
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	return err
}
