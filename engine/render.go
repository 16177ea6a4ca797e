package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	release "helm.sh/helm/v4/pkg/release/v1"
	"sigs.k8s.io/yaml"
)

// renderArgs are what `helm template RELEASE CHART --namespace NS --kube-version V --skip-crds -f values` takes.
type renderArgs struct {
	// The chart .tgz (checked against the lock by krc) and its sha256. The bytes are sent with the first request
	// for an archive; later requests name its digest only.
	Archive     []byte         `json:"archive,omitempty"`
	ArchiveSHA  string         `json:"archiveSha256"`
	Release     string         `json:"release"`
	Namespace   string         `json:"namespace"`
	KubeVersion string         `json:"kubeVersion"`
	APIVersions []string       `json:"apiVersions"`
	Values      map[string]any `json:"values"`
}

// archiveStore holds the chart archives this process has been sent, by sha256, each unpacked once; a run renders
// a few charts for hundreds of releases (unpacking took a third of the engine's time when done per render).
// Bounded: past maxArchives the oldest is forgotten and krc sends it again.
type archiveStore struct {
	mu    sync.Mutex
	order []string
	bySHA map[string]*heldArchive
}

// heldArchive is one archive's bytes until the first render that needs them, then its files as Helm reads them out
// of the archive (with Helm's own path and size checks). The files are never changed. A chart with dependencies is
// built again from them for each render, since processing its dependencies mutates it; one without is built once
// (chartToRender).
type heldArchive struct {
	data   []byte
	unpack sync.Once
	files  []*archive.BufferedFile
	err    error

	load   sync.Once
	shared *chartv2.Chart // built once, when no render can change it (chartToRender); nil otherwise
}

func (h *heldArchive) chartFiles() ([]*archive.BufferedFile, error) {
	h.unpack.Do(func() {
		h.files, h.err = archive.LoadArchiveFiles(bytes.NewReader(h.data))
		h.files = withoutUnreadCRDs(h.files)
		h.data = nil // the files are what every render reads from now on
	})
	return h.files, h.err
}

// chartToRender is the chart a render installs. A client-only install only reads a chart that neither declares
// dependencies nor holds subcharts: Helm's dependency processing, the one step that writes to a chart, returns
// before touching it; values are coalesced from a deep copy of the chart's; templates, metadata and files reach the
// templates as copies. Such a chart is built once and shared by every render of the archive, concurrent ones
// included (building it per render was 6 % of the engine's CPU in a cold render). Any other chart is built anew.
func (h *heldArchive) chartToRender() (*chartv2.Chart, error) {
	files, err := h.chartFiles()
	if err != nil {
		return nil, err
	}
	h.load.Do(func() {
		chart, err := loader.LoadFiles(files)
		if err == nil && chart.Metadata != nil && chart.Metadata.Dependencies == nil && len(chart.Dependencies()) == 0 {
			h.shared = chart
		}
	})
	if h.shared != nil {
		return h.shared, nil
	}
	return loader.LoadFiles(files) // a chart that does not build reports its error here, each render
}

// withoutUnreadCRDs leaves out the chart's crds/ files when nothing can read them. A client-only install that
// does not include CRDs never renders them, so a template reaches them only through .Files (tpl renders text
// with the same context, and a dependency's named templates could be given it): a chart with no dependencies
// whose templates never name Files nor call tpl renders the same without them. They are most of the bytes held
// (a kuberay-operator chart's four CRDs are 3.9 MB of its 4 MB).
func withoutUnreadCRDs(files []*archive.BufferedFile) []*archive.BufferedFile {
	for _, file := range files {
		if strings.HasPrefix(file.Name, "charts/") {
			return files
		}
		if strings.HasPrefix(file.Name, "templates/") &&
			(bytes.Contains(file.Data, []byte("Files")) || bytes.Contains(file.Data, []byte("tpl"))) {
			return files
		}
	}
	kept := make([]*archive.BufferedFile, 0, len(files))
	for _, file := range files {
		if !strings.HasPrefix(file.Name, "crds/") {
			kept = append(kept, file)
		}
	}
	return kept
}

const maxArchives = 32

var archives = &archiveStore{bySHA: map[string]*heldArchive{}}

// errArchiveNotHeld: a request named an archive by digest that this process does not hold (a new engine, or one
// that forgot it); the answer says needArchive, as validate's says needCRD, and krc sends the bytes again.
var errArchiveNotHeld = errors.New("archive not held")

func (s *archiveStore) held(sha string, data []byte) (*heldArchive, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if known, ok := s.bySHA[sha]; ok {
		return known, nil
	}
	if data == nil {
		return nil, errArchiveNotHeld
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != sha {
		return nil, fmt.Errorf("the chart archive's sha256 is %s, not %s", got, sha)
	}
	s.order = append(s.order, sha)
	if len(s.order) > maxArchives {
		delete(s.bySHA, s.order[0])
		s.order = s.order[1:]
	}
	held := &heldArchive{data: data}
	s.bySHA[sha] = held
	return held, nil
}

// storeArchive keeps a render request's archive before later requests, which name it by digest, can run.
func storeArchive(raw json.RawMessage) error {
	var args struct {
		Archive    []byte `json:"archive,omitempty"`
		ArchiveSHA string `json:"archiveSha256"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return fmt.Errorf("bad render arguments: %w", err)
	}
	if args.Archive == nil {
		return nil
	}
	_, err := archives.held(args.ArchiveSHA, args.Archive)
	return err
}

func renderOp(raw json.RawMessage) (any, error) {
	var args renderArgs
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, fmt.Errorf("bad render arguments: %w", err)
	}
	text, err := render(args)
	if errors.Is(err, errArchiveNotHeld) {
		return map[string]any{"needArchive": true}, nil
	}
	if err != nil {
		return nil, err
	}
	docs, err := documents(text)
	if err != nil {
		return nil, err
	}
	return map[string]any{"manifest": text, "documents": docs}, nil
}

// render is helm template's client-only install dry run, with every input explicit (no kubeconfig, no
// environment), of the archive's chart (chartToRender).
func render(args renderArgs) (string, error) {
	held, err := archives.held(args.ArchiveSHA, args.Archive)
	if err != nil {
		return "", err
	}
	chart, err := held.chartToRender()
	if err != nil {
		return "", fmt.Errorf("cannot load the chart: %w", err)
	}
	cfg := action.NewConfiguration()
	cfg.SetLogger(slog.NewTextHandler(io.Discard, nil))
	install := action.NewInstall(cfg)
	install.DryRunStrategy = action.DryRunClient
	install.Replace = true
	install.ReleaseName = args.Release
	install.Namespace = args.Namespace
	install.IncludeCRDs = false
	install.APIVersions = common.VersionSet(args.APIVersions)
	if args.KubeVersion != "" {
		kube, err := common.ParseKubeVersion(args.KubeVersion)
		if err != nil {
			return "", fmt.Errorf("invalid kube version %q: %w", args.KubeVersion, err)
		}
		install.KubeVersion = kube
	}
	values := args.Values
	if values == nil {
		values = map[string]any{}
	}
	released, err := install.RunWithContext(context.Background(), chart, values)
	if err != nil {
		return "", err
	}
	rel, ok := released.(*release.Release)
	if !ok {
		return "", fmt.Errorf("helm returned a %T, not a release", released)
	}
	// The text helm template prints: the manifest, then each hook under its source comment.
	var out strings.Builder
	fmt.Fprintln(&out, strings.TrimSpace(rel.Manifest))
	for _, hook := range rel.Hooks {
		fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", hook.Path, hook.Manifest)
	}
	return out.String(), nil
}

// documents are the manifest's objects as JSON, read as Kubernetes' own clients read YAML (sigs.k8s.io/yaml) and
// split as Helm splits a manifest (splitManifest); empty documents (a template that printed only a comment) are
// left out. krc reads these instead of parsing the text again in Python.
func documents(manifest string) ([]json.RawMessage, error) {
	split := splitManifest(manifest)
	out := make([]json.RawMessage, 0, len(split))
	for _, document := range split {
		data, err := yaml.YAMLToJSON([]byte(document))
		if err != nil {
			return nil, fmt.Errorf("the chart printed a document that is not YAML: %w", err)
		}
		if string(data) != "null" {
			out = append(out, data)
		}
	}
	return out, nil
}
