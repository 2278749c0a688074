package agentcli_test

import (
	"go/ast"
	"go/build"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const modulePath = "github.com/agentcli/agentcli"

// TestDocLinks: every doc link ([Name], [pkg.Name], [Type.Method],
// [*Type]) in the doc comments of every package of the module resolves to
// something that exists: a declaration of the package, a method or field
// of one of its types, or an exported declaration of the package the link
// names (the standard library included). Doc comments and README.md that
// name one of the module's public packages' identifiers in prose
// ("agentcli.Open", "agentclitest.Server.Wire") must name existing ones
// too.
func TestDocLinks(t *testing.T) {
	var dirs []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		base := d.Name()
		if p != "." && (strings.HasPrefix(base, ".") || base == "testdata" || base == "node_modules" || isModule(p)) {
			return filepath.SkipDir
		}
		dirs = append(dirs, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	syms := &symbols{byPath: map[string]map[string]bool{}}
	checked, prose := 0, 0
	for _, dir := range dirs {
		importPath := modulePath
		if dir != "." {
			importPath += "/" + filepath.ToSlash(dir)
		}
		files := parsePkg(t, dir)
		if len(files) == 0 {
			continue
		}
		own := syms.of(importPath)
		for _, f := range files {
			imports := map[string]string{}
			for _, is := range f.Imports {
				p, _ := strconv.Unquote(is.Path.Value)
				name := path.Base(p)
				if is.Name != nil {
					name = is.Name.Name
				} else if n := syms.pkgName(p); n != "" {
					name = n
				}
				imports[name] = p
			}
			for _, cg := range docComments(f) {
				pos := fileSetOf(f).Position(cg.Pos())
				text := cg.Text()
				var p comment.Parser
				p.LookupSym = func(recv, name string) bool { return true }
				p.LookupPackage = func(name string) (string, bool) {
					ip, ok := imports[name]
					return ip, ok
				}
				for _, l := range docLinks(p.Parse(text)) {
					if !strings.ContainsAny(l.Name, "abcdefghijklmnopqrstuvwxyz") {
						// "[]", "[REDACTED]", "[ERROR]": text in brackets,
						// which go doc shows as it is, not a link.
						continue
					}
					checked++
					if !syms.resolves(own, l) {
						t.Errorf("%s: doc link [%s] does not resolve", pos, linkText(l))
					}
				}
				for _, m := range qualifiedNames(text) {
					prose++
					if !syms.resolvesQualified(m) {
						t.Errorf("%s: %q names no identifier of the module", pos, m)
					}
				}
			}
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	root := syms.of(modulePath)
	for i, line := range strings.Split(string(readme), "\n") {
		for _, m := range qualifiedNames(line) {
			prose++
			if !syms.resolvesQualified(m) {
				t.Errorf("README.md:%d: %q names no identifier of the module", i+1, m)
			}
		}
		// `Type.Member` of a type of the root package, as README writes
		// `Request.Timeout` or `Options.Path`.
		for _, m := range memberRe.FindAllStringSubmatch(line, -1) {
			if root[m[1]] {
				prose++
				if !root[m[1]+"."+m[2]] {
					t.Errorf("README.md:%d: %s.%s: %s has no such field or method", i+1, m[1], m[2], m[1])
				}
			}
		}
	}
	t.Logf("%d doc links and %d qualified names checked", checked, prose)
	if checked < 20 || prose < 50 {
		t.Fatalf("only %d doc links and %d qualified names checked: the walk missed the packages", checked, prose)
	}
}

// isModule reports whether dir holds a module of its own (not part of
// this one).
func isModule(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "go.mod"))
	return err == nil
}

var fsets sync.Map // *ast.File → *token.FileSet

func fileSetOf(f *ast.File) *token.FileSet {
	v, _ := fsets.Load(f)
	return v.(*token.FileSet)
}

// parsePkg parses the non-test Go files of dir, comments included.
func parsePkg(t *testing.T, dir string) []*ast.File {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		fsets.Store(f, fset)
		files = append(files, f)
	}
	return files
}

// docComments returns the doc comments of f: the package's, and those of
// its declarations, specs, struct fields and interface methods.
func docComments(f *ast.File) []*ast.CommentGroup {
	var out []*ast.CommentGroup
	add := func(cg *ast.CommentGroup) {
		if cg != nil {
			out = append(out, cg)
		}
	}
	add(f.Doc)
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GenDecl:
			add(n.Doc)
		case *ast.FuncDecl:
			add(n.Doc)
		case *ast.TypeSpec:
			add(n.Doc)
		case *ast.ValueSpec:
			add(n.Doc)
		case *ast.Field:
			add(n.Doc)
		}
		return true
	})
	return out
}

// docLinks returns every doc link in d.
func docLinks(d *comment.Doc) []*comment.DocLink {
	var out []*comment.DocLink
	var text func([]comment.Text)
	text = func(ts []comment.Text) {
		for _, t := range ts {
			switch t := t.(type) {
			case *comment.DocLink:
				out = append(out, t)
			case *comment.Link:
				text(t.Text)
			case *comment.Italic, comment.Plain:
			}
		}
	}
	for _, b := range d.Content {
		switch b := b.(type) {
		case *comment.Paragraph:
			text(b.Text)
		case *comment.Heading:
			text(b.Text)
		case *comment.List:
			for _, it := range b.Items {
				for _, c := range it.Content {
					if p, ok := c.(*comment.Paragraph); ok {
						text(p.Text)
					}
				}
			}
		}
	}
	return out
}

func linkText(l *comment.DocLink) string {
	s := l.Name
	if l.Recv != "" {
		s = l.Recv + "." + s
	}
	if l.ImportPath != "" {
		s = l.ImportPath + "." + s
	}
	return s
}

// publicPkgs are the module's packages whose identifiers prose may name
// as pkg.Name.
var publicPkgs = map[string]string{
	"agentcli":     modulePath,
	"agentclitest": modulePath + "/agentclitest",
	"claude":       modulePath + "/claude",
	"codex":        modulePath + "/codex",
	"gemini":       modulePath + "/gemini",
	"opencode":     modulePath + "/opencode",
}

// qualifiedRe finds pkg.Name and pkg.Type.Member of the public packages
// in prose; Name starts with an upper-case letter (file names such as
// ".claude.json" do not), and the name is not itself part of a longer
// dotted word or path.
var qualifiedRe = regexp.MustCompile(`(?:^|[^\w./-])((?:agentcli|agentclitest|claude|codex|gemini|opencode)\.[A-Z]\w*(?:\.[A-Z]\w*)?)`)

// memberRe finds `Type.Member` in README's code spans.
var memberRe = regexp.MustCompile("`\\*?([A-Z]\\w*)\\.([A-Z]\\w*)(?:\\(\\))?`")

func qualifiedNames(s string) []string {
	var out []string
	for _, m := range qualifiedRe.FindAllStringSubmatchIndex(s, -1) {
		if end := m[3]; end < len(s) && s[end] == '*' {
			continue // a pattern: "the agentcli.ToolName* constants"
		}
		out = append(out, s[m[2]:m[3]])
	}
	return out
}

// symbols knows the declarations of packages: "Name" for top-level
// declarations, "Type.Member" for methods, struct fields and interface
// methods.
type symbols struct {
	byPath map[string]map[string]bool
	names  map[string]string
}

func (s *symbols) of(importPath string) map[string]bool {
	if m, ok := s.byPath[importPath]; ok {
		return m
	}
	m := map[string]bool{}
	s.byPath[importPath] = m
	dir := ""
	if rest, ok := strings.CutPrefix(importPath, modulePath); ok {
		dir = "." + rest
	} else if bp, err := build.Import(importPath, ".", build.FindOnly); err == nil {
		dir = bp.Dir
	}
	if dir == "" {
		return m
	}
	ents, _ := os.ReadDir(dir)
	fset := token.NewFileSet()
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		if s.names == nil {
			s.names = map[string]string{}
		}
		s.names[importPath] = f.Name.Name
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					m[d.Name.Name] = true
					continue
				}
				t := d.Recv.List[0].Type
				if st, ok := t.(*ast.StarExpr); ok {
					t = st.X
				}
				if ix, ok := t.(*ast.IndexExpr); ok {
					t = ix.X
				}
				if id, ok := t.(*ast.Ident); ok {
					m[id.Name+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						m[sp.Name.Name] = true
						var fl *ast.FieldList
						switch tt := sp.Type.(type) {
						case *ast.StructType:
							fl = tt.Fields
						case *ast.InterfaceType:
							fl = tt.Methods
						}
						if fl != nil {
							for _, f := range fl.List {
								for _, n := range f.Names {
									m[sp.Name.Name+"."+n.Name] = true
								}
								if len(f.Names) == 0 { // embedded
									t := f.Type
									if st, ok := t.(*ast.StarExpr); ok {
										t = st.X
									}
									switch t := t.(type) {
									case *ast.Ident:
										m[sp.Name.Name+"."+t.Name] = true
									case *ast.SelectorExpr:
										m[sp.Name.Name+"."+t.Sel.Name] = true
									}
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							m[n.Name] = true
						}
					}
				}
			}
		}
	}
	return m
}

// pkgName returns the package name of importPath, or "".
func (s *symbols) pkgName(importPath string) string {
	s.of(importPath)
	return s.names[importPath]
}

// resolves reports whether l names something that exists: in own for a
// link without an import path, in the linked package otherwise.
func (s *symbols) resolves(own map[string]bool, l *comment.DocLink) bool {
	m := own
	if l.ImportPath != "" {
		m = s.of(l.ImportPath)
	}
	if l.Recv != "" {
		return m[strings.TrimPrefix(l.Recv, "*")+"."+l.Name]
	}
	return m[l.Name]
}

// resolvesQualified reports whether q (pkg.Name or pkg.Type.Member) names
// a declaration of one of the public packages.
func (s *symbols) resolvesQualified(q string) bool {
	pkg, rest, _ := strings.Cut(q, ".")
	return s.of(publicPkgs[pkg])[rest]
}
