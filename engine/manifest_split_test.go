package main

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
)

// helmsSplit is Helm's own split of text, as the list of its documents in order.
func helmsSplit(text string) []string {
	split := releaseutil.SplitManifests(text)
	var pieces []string
	for i := range len(split) {
		pieces = append(pieces, split[fmt.Sprintf("manifest-%d", i)])
	}
	return pieces
}

func sameSplit(t testing.TB, text string) {
	t.Helper()
	if got, want := splitManifest(text), helmsSplit(text); !reflect.DeepEqual(got, want) {
		t.Fatalf("split of %q:\n got %q\nwant %q", text, got, want)
	}
}

func TestSplitManifestIsHelms(t *testing.T) {
	// every string of these characters up to 9 long: dashes, the whitespace the expression knows, a letter
	alphabet := []byte{'-', '\n', ' ', '\t', 'a'}
	var each func(prefix []byte, left int)
	each = func(prefix []byte, left int) {
		sameSplit(t, string(prefix))
		if left == 0 {
			return
		}
		for _, c := range alphabet {
			each(append(prefix, c), left-1)
		}
	}
	each(nil, 9)

	// longer strings of a wider alphabet: whitespace the expression does not know but Unicode trims (vertical
	// tab, NBSP, the line separator), carriage returns and form feeds, YAML's own characters
	wide := []string{"-", "-", "-", "\n", "\n", " ", "\t", "\r", "\f", "\v", "\u00a0", "\u2028", "a", ":", "#", "---"}
	random := rand.New(rand.NewSource(1))
	for range 200000 {
		var text strings.Builder
		for range random.Intn(60) {
			text.WriteString(wide[random.Intn(len(wide))])
		}
		sameSplit(t, text.String())
	}
}

func TestSplitManifestOfEveryChartsOutput(t *testing.T) {
	charts := chartRepository(t)
	archives, _ := filepath.Glob(filepath.Join(charts, "*.tgz"))
	if len(archives) == 0 {
		t.Fatalf("no chart archives in %s", charts)
	}
	for _, path := range archives {
		archive, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, values := range []map[string]any{{}, {"singleNamespaceInstall": true, "watchNamespace": []any{"a", "b"}}} {
			text, err := render(renderArgs{Archive: archive, ArchiveSHA: digest(archive), Release: "kuberay-operator",
				Namespace: "ray-system", KubeVersion: "1.33", Values: values})
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if len(splitManifest(text)) < 5 {
				t.Fatalf("%s: %d documents", path, len(splitManifest(text)))
			}
			sameSplit(t, text)
		}
	}
}

func FuzzSplitManifest(f *testing.F) {
	for _, seed := range []string{"", "---", "a\n---\nb", "---\n---\n", " \n --- \n---x\n\t---", "a \r\n---\f\n b"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) { sameSplit(t, text) })
}

// BenchmarkSplitManifest: Helm's split and splitManifest over a chart's output (`go test -bench SplitManifest`).
func BenchmarkSplitManifest(b *testing.B) {
	archive, err := os.ReadFile(filepath.Join(chartRepository(b), "kuberay-operator-1.7.0.tgz"))
	if err != nil {
		b.Fatal(err)
	}
	text, err := render(renderArgs{Archive: archive, ArchiveSHA: digest(archive), Release: "kuberay-operator",
		Namespace: "ray-system", KubeVersion: "1.33", Values: map[string]any{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("helm", func(b *testing.B) {
		for b.Loop() {
			helmsSplit(text)
		}
	})
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			splitManifest(text)
		}
	})
}
