package agentcli_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryExportedIdentifierIsDocumented: every exported identifier of the
// public packages (types, functions, methods, constants, variables and
// struct fields) has a doc comment. A constant or variable in a documented
// group counts as documented only with a comment of its own.
func TestEveryExportedIdentifierIsDocumented(t *testing.T) {
	public := []string{".", "agentclitest", "claude", "codex", "gemini", "opencode"}
	for _, dir := range public {
		fset := token.NewFileSet()
		names, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			for _, miss := range undocumented(f) {
				t.Errorf("%s: %s has no doc comment", filepath.Join(dir, filepath.Base(name)), miss)
			}
		}
	}
}

func undocumented(f *ast.File) []string {
	var out []string
	has := func(cg ...*ast.CommentGroup) bool {
		for _, c := range cg {
			if c != nil && strings.TrimSpace(c.Text()) != "" {
				return true
			}
		}
		return false
	}
	fields := func(owner string, fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, fd := range fl.List {
			for _, n := range fd.Names {
				if n.IsExported() && !has(fd.Doc, fd.Comment) {
					out = append(out, owner+"."+n.Name)
				}
			}
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) > 0 {
				recv := d.Recv.List[0].Type
				if s, ok := recv.(*ast.StarExpr); ok {
					recv = s.X
				}
				id, ok := recv.(*ast.Ident)
				if !ok || !id.IsExported() {
					continue
				}
				name = id.Name + "." + name
			}
			if !has(d.Doc) {
				out = append(out, name)
			}
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				switch sp := sp.(type) {
				case *ast.TypeSpec:
					if !sp.Name.IsExported() {
						continue
					}
					if !has(sp.Doc, sp.Comment) && !(len(d.Specs) == 1 && has(d.Doc)) {
						out = append(out, sp.Name.Name)
					}
					switch tt := sp.Type.(type) {
					case *ast.StructType:
						fields(sp.Name.Name, tt.Fields)
					case *ast.InterfaceType:
						fields(sp.Name.Name, tt.Methods)
					}
				case *ast.ValueSpec:
					for _, n := range sp.Names {
						if n.IsExported() && !has(sp.Doc, sp.Comment) && !(len(d.Specs) == 1 && has(d.Doc)) {
							out = append(out, n.Name)
						}
					}
				}
			}
		}
	}
	return out
}
