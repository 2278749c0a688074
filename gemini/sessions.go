package gemini

// Portable sessions (agentcli.ExportSession, ImportSession), checked
// against gemini 0.61.0: gemini keeps a session in one chat file,
// HOME/.gemini/tmp/SLUG/chats/session-MINUTE-ID8.jsonl (HOME is
// $GEMINI_CLI_HOME, else $HOME), whose first line names the session id.
// SLUG is the project's folder: projects.json maps each directory to one,
// claimed as the slugified base name of the directory (-1, -2, ... when
// taken), and tmp/SLUG/.project_root and history/SLUG/.project_root name
// the directory that owns it. The chat names the directory in its session
// context; ImportSession writes it, rewritten to the new directory, under
// the new directory's slug (claiming one as gemini does when it has none),
// keeping the file's name (its minute: see live.go on loading a session in
// the minute its file names), and `gemini --resume=ID` from there has the
// whole history.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentcli/agentcli/driver"
)

// geminiRoot returns HOME/.gemini for r.
func geminiRoot(r *driver.Run) (string, error) {
	h, err := userHome(r)
	if err != nil {
		return "", err
	}
	return filepath.Join(h, geminiDir), nil
}

// chatName is an exported chat's name.
var chatName = regexp.MustCompile(`^chats/session-[0-9T-]+-[0-9a-f]{8}\.jsonl$`)

// chatSession returns the session id the chat file at p records (its
// first line's sessionId), or "".
func chatSession(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	if !sc.Scan() {
		return ""
	}
	var head struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(sc.Bytes(), &head) != nil {
		return ""
	}
	return head.SessionID
}

// exportSession returns the chat of session id: in r.Dir's project
// folder, or else in any.
func exportSession(_ context.Context, r *driver.Run, id string) ([]driver.SessionFile, error) {
	if !driver.IsUUID(id) {
		return nil, driver.SessionNotFound(Name, id) // "latest" or an index names no file here
	}
	root, err := geminiRoot(r)
	if err != nil {
		return nil, err
	}
	pattern := "session-*-" + strings.ToLower(id[:8]) + ".jsonl"
	var candidates []string
	if slug := projectSlugs(root)[r.Dir]; slug != "" {
		candidates, _ = filepath.Glob(filepath.Join(root, "tmp", slug, "chats", pattern))
	}
	all, _ := filepath.Glob(filepath.Join(root, "tmp", "*", "chats", pattern))
	for _, p := range append(candidates, all...) {
		if strings.EqualFold(chatSession(p), id) {
			f, err := driver.ReadSessionFile(p, "chats/"+filepath.Base(p))
			if err != nil {
				return nil, err
			}
			return []driver.SessionFile{f}, nil
		}
	}
	return nil, driver.SessionNotFound(Name, id)
}

// importSession writes the chat under r.Dir's project slug.
func importSession(_ context.Context, r *driver.Run, _, id string, files []driver.SessionFile) (string, error) {
	if len(files) != 1 || !chatName.MatchString(files[0].Name) || !driver.IsUUID(id) {
		return "", errors.New("not a gemini session archive (one chat file)")
	}
	line, _, _ := bytes.Cut(files[0].Data, []byte("\n"))
	var head struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(line, &head) != nil || !strings.EqualFold(head.SessionID, id) {
		return "", fmt.Errorf("not a gemini session archive: the chat is not session %s's", id)
	}
	root, err := geminiRoot(r)
	if err != nil {
		return "", err
	}
	slug, err := claimSlug(root, r.Dir)
	if err != nil {
		return "", err
	}
	return id, driver.WriteSessionFile(filepath.Join(root, "tmp", slug), files[0])
}

// projectsFile is the registry of project slugs under HOME/.gemini.
const projectsFile = "projects.json"

// projectSlugs returns projects.json's map of directories to slugs.
func projectSlugs(root string) map[string]string {
	var reg struct {
		Projects map[string]string `json:"projects"`
	}
	b, err := os.ReadFile(filepath.Join(root, projectsFile))
	if err == nil {
		json.Unmarshal(b, &reg) //nolint:errcheck // an unreadable registry maps nothing, as gemini resets it
	}
	if reg.Projects == nil {
		reg.Projects = map[string]string{}
	}
	return reg.Projects
}

// slugify is gemini's slug of a directory's base name.
func slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	if s := strings.Trim(b.String(), "-"); s != "" {
		return s
	}
	return "project"
}

// claimSlug returns the slug of dir in projects.json, or claims one as
// gemini does (the slugified base name, then -1, -2, ..., skipping those
// mapped to another directory or whose folders another directory owns),
// writing the owner markers and the registry.
func claimSlug(root, dir string) (string, error) {
	reg := projectSlugs(root)
	if s := reg[dir]; s != "" {
		return s, writeMarkers(root, s, dir)
	}
	taken := map[string]bool{}
	for _, s := range reg {
		taken[s] = true
	}
	base := slugify(filepath.Base(dir))
	for n := 0; n < 10000; n++ {
		s := base
		if n > 0 {
			s += "-" + strconv.Itoa(n)
		}
		if taken[s] || ownedByOther(root, s, dir) {
			continue
		}
		if err := writeMarkers(root, s, dir); err != nil {
			return "", err
		}
		reg[dir] = s
		b, _ := json.MarshalIndent(map[string]any{"projects": reg}, "", "  ")
		if err := driver.WriteSessionFile(root, driver.SessionFile{Name: projectsFile, Data: b}); err != nil {
			return "", err
		}
		return s, nil
	}
	return "", fmt.Errorf("no free project slug for %s", dir)
}

// ownedByOther reports whether a folder of slug names another directory
// as its owner.
func ownedByOther(root, slug, dir string) bool {
	for _, base := range []string{"tmp", "history"} {
		b, err := os.ReadFile(filepath.Join(root, base, slug, ".project_root"))
		if err == nil && strings.TrimSpace(string(b)) != dir {
			return true
		}
	}
	return false
}

// writeMarkers writes the owner markers of slug.
func writeMarkers(root, slug, dir string) error {
	for _, base := range []string{"tmp", "history"} {
		if err := driver.WriteSessionFile(filepath.Join(root, base), driver.SessionFile{Name: slug + "/.project_root", Data: []byte(dir)}); err != nil {
			return err
		}
	}
	return nil
}
