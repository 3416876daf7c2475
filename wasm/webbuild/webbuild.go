package webbuild

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// VuguModule is the module whose renderer script is extracted.
const VuguModule = "github.com/vugu/vugu"

// Options configure a build.
type Options struct {
	// Out is the output directory. Required; created if missing.
	Out string
	// Root is the module root (holding go.mod and index.html). Defaults to
	// the working directory.
	Root string
	// Go is the go command. Defaults to "go".
	Go string
	// NoGzip skips writing main.wasm.gz.
	NoGzip bool
}

// Result describes a finished build.
type Result struct {
	Dir      string // the output directory
	WasmSize int64  // bytes of main.wasm
	GzipSize int64  // bytes of main.wasm.gz (0 with NoGzip)
}

// Build compiles and assembles the app into opt.Out.
func Build(ctx context.Context, opt Options) (*Result, error) {
	if opt.Out == "" {
		return nil, errors.New("webbuild: no output directory")
	}
	if opt.Go == "" {
		opt.Go = "go"
	}
	if opt.Root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("webbuild: %w", err)
		}
		opt.Root = wd
	}
	if err := os.MkdirAll(opt.Out, 0o755); err != nil {
		return nil, fmt.Errorf("webbuild: %w", err)
	}
	out, err := filepath.Abs(opt.Out)
	if err != nil {
		return nil, fmt.Errorf("webbuild: %w", err)
	}
	res := &Result{Dir: out}

	goroot, err := goOutput(ctx, opt, nil, "env", "GOROOT")
	if err != nil {
		return nil, err
	}
	if err := copyFile(filepath.Join(goroot, "lib", "wasm", "wasm_exec.js"), filepath.Join(out, "wasm_exec.js")); err != nil {
		return nil, err
	}
	if err := copyFile(filepath.Join(opt.Root, "index.html"), filepath.Join(out, "index.html")); err != nil {
		return nil, err
	}
	vuguDir, err := goOutput(ctx, opt, nil, "list", "-m", "-f", "{{.Dir}}", VuguModule)
	if err != nil {
		return nil, err
	}
	script, err := RendererScript(filepath.Join(vuguDir, "domrender"))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(out, "vugu-render.js"), []byte(script), 0o644); err != nil {
		return nil, fmt.Errorf("webbuild: %w", err)
	}

	wasm := filepath.Join(out, "main.wasm")
	if _, err := goOutput(ctx, opt, []string{"GOOS=js", "GOARCH=wasm"}, "build", "-trimpath", "-ldflags=-s", "-o", wasm, "./wasm"); err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(wasm)
	if err != nil {
		return nil, fmt.Errorf("webbuild: %w", err)
	}
	res.WasmSize = int64(len(raw))
	gzPath := wasm + ".gz"
	if opt.NoGzip {
		os.Remove(gzPath) // a stale .gz must not outlive a new main.wasm
		return res, nil
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("webbuild: %w", err)
	}
	zw.Write(raw)
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("webbuild: %w", err)
	}
	if err := os.WriteFile(gzPath, buf.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("webbuild: %w", err)
	}
	res.GzipSize = int64(buf.Len())
	return res, nil
}

func goOutput(ctx context.Context, opt Options, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, opt.Go, args...)
	cmd.Dir = opt.Root
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("webbuild: %s %s %s: %w\n%s", strings.Join(env, " "), opt.Go, strings.Join(args, " "), err, stderr.Bytes())
	}
	return strings.TrimSpace(stdout.String()), nil
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("webbuild: %w", err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		return fmt.Errorf("webbuild: %w", err)
	}
	return nil
}

// RendererScript returns the value of the string constant jsHelperScript
// declared in the Go files of dir (vugu's domrender package).
func RendererScript(dir string) (string, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return "", fmt.Errorf("webbuild: %w", err)
	}
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if id.Name != "jsHelperScript" || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						return "", fmt.Errorf("webbuild: jsHelperScript in %s is not a string literal", name)
					}
					return strconv.Unquote(lit.Value)
				}
			}
		}
	}
	return "", fmt.Errorf("webbuild: no jsHelperScript constant in %s (vugu version changed?)", dir)
}

// WriteOverlay writes a `go build -overlay` file that places every file of
// the built app in appDir into embedDir (the fedcast command's webapp
// directory, which on disk holds only a placeholder page), so that the
// command embeds the real app without the build touching the source tree.
// Paths are made absolute, as the go command requires.
func WriteOverlay(path, appDir, embedDir string) error {
	appDir, err := filepath.Abs(appDir)
	if err != nil {
		return err
	}
	embedDir, err = filepath.Abs(embedDir)
	if err != nil {
		return err
	}
	ents, err := os.ReadDir(appDir)
	if err != nil {
		return fmt.Errorf("webbuild: overlay: %w (run make web first)", err)
	}
	replace := map[string]string{}
	for _, e := range ents {
		if e.Type().IsRegular() {
			replace[filepath.Join(embedDir, e.Name())] = filepath.Join(appDir, e.Name())
		}
	}
	if _, ok := replace[filepath.Join(embedDir, "index.html")]; !ok {
		return fmt.Errorf("webbuild: overlay: %s holds no index.html (run make web first)", appDir)
	}
	b, err := json.MarshalIndent(struct{ Replace map[string]string }{replace}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
