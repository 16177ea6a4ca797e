package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"maps"
	"slices"
	"strings"
	"testing"
)

// chartArchive is a chart packaged as helm package does: every file under the chart's folder name.
func chartArchive(t *testing.T, files map[string]string) []byte {
	var buf bytes.Buffer
	zipped := gzip.NewWriter(&buf)
	tarred := tar.NewWriter(zipped)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		body := files[name]
		if err := tarred.WriteHeader(&tar.Header{Name: "thing/" + name, Mode: 0o644, Size: int64(len(body)),
			Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tarred.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tarred.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zipped.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const thingCRD = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things.x.io\n"

// A chart's CRDs are left out of what the engine holds only where no template can read them: a template that
// reads them through .Files, or through tpl, still renders them as helm template does.
func TestCRDFilesAreHeldOnlyWhenATemplateCanReadThem(t *testing.T) {
	helm := helmCLI(t)
	cases := []struct {
		name     string
		template string
		values   map[string]any
		holdsCRD bool
	}{
		{"files", "data:\n  crd: {{ .Files.Get \"crds/thing.yaml\" | quote }}\n", nil, true},
		{"tpl", "data:\n  crd: {{ tpl .Values.text . | quote }}\n",
			map[string]any{"text": "{{ .Files.Get \"crds/thing.yaml\" }}"}, true},
		{"neither", "data:\n  name: {{ .Release.Name | quote }}\n", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			archive := chartArchive(t, map[string]string{
				"Chart.yaml":      "apiVersion: v2\nname: thing\nversion: 0.1.0\n",
				"values.yaml":     "text: \"\"\n",
				"crds/thing.yaml": thingCRD,
				"templates/map.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n" +
					c.template,
			})
			got, err := render(renderArgs{Archive: archive, ArchiveSHA: digest(archive), Release: "one",
				Namespace: "ns", KubeVersion: "1.33", Values: c.values})
			if err != nil {
				t.Fatal(err)
			}
			want := helmTemplate(t, helm, archive, "one", "ns", c.values)
			if got != want {
				t.Fatalf("engine and helm template differ:\n--- engine\n%s\n--- helm\n%s", got, want)
			}
			if c.holdsCRD && !strings.Contains(got, "things.x.io") {
				t.Fatalf("the template should have printed the CRD:\n%s", got)
			}
			held, err := archives.held(digest(archive), nil)
			if err != nil {
				t.Fatal(err)
			}
			files, _ := held.chartFiles()
			holds := false
			for _, file := range files {
				holds = holds || file.Name == "crds/thing.yaml"
			}
			if holds != c.holdsCRD {
				t.Fatalf("holds the CRD file: %v, want %v", holds, c.holdsCRD)
			}
		})
	}
}
