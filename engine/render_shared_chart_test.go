package main

import (
	"strings"
	"testing"
)

// A chart without dependencies is built once and shared by the renders of its archive; what one render's
// templates change (their values, the chart's metadata as they see it) reaches no other render, whichever order
// they come in: each prints what helm template prints for it alone.
func TestASharedChartKeepsNoRendersChanges(t *testing.T) {
	helm := helmCLI(t)
	archive := chartArchive(t, map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: thing\nversion: 0.1.0\n",
		"values.yaml": "nested:\n  count: 0\nlist: [a]\n",
		"templates/map.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n" +
			"{{- $_ := set .Values.nested \"count\" (add1 .Values.nested.count) }}\n" +
			"{{- $_ := set .Values \"list\" (append .Values.list \"b\") }}\n" +
			"{{- $_ := set .Chart \"Name\" (printf \"%s-seen\" .Chart.Name) }}\n" +
			"  count: {{ .Values.nested.count | quote }}\n  list: {{ join \",\" .Values.list | quote }}\n" +
			"  chart: {{ .Chart.Name | quote }}\n  given: {{ .Values.given | default \"none\" | quote }}\n",
	})
	renders := []map[string]any{nil, {"given": "one"}, nil, {"nested": map[string]any{"count": 5}}}
	if got := rendersAsHelmDoes(t, helm, archive, renders); !strings.Contains(got[2], `count: "1"`) {
		t.Fatalf("the third render counted another render's changes:\n%s", got[2])
	}
	held, err := archives.held(digest(archive), nil)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := held.chartToRender()
	second, _ := held.chartToRender()
	if first != second {
		t.Fatal("a chart without dependencies was built again for a render")
	}
}

// A chart with dependencies is built anew for each render: processing them drops a disabled subchart from the
// chart, and a later render that enables it must still find it.
func TestAChartWithDependenciesIsBuiltPerRender(t *testing.T) {
	helm := helmCLI(t)
	archive := chartArchive(t, map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: thing\nversion: 0.1.0\n" +
			"dependencies:\n- name: sub\n  version: 0.1.0\n  condition: sub.enabled\n",
		"values.yaml":                 "sub:\n  enabled: false\n",
		"templates/map.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
		"charts/sub/Chart.yaml":       "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
		"charts/sub/values.yaml":      "enabled: false\n",
		"charts/sub/templates/s.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-sub\n",
	})
	on := map[string]any{"sub": map[string]any{"enabled": true}}
	renders := []map[string]any{nil, on, nil, on}
	for i, got := range rendersAsHelmDoes(t, helm, archive, renders) {
		if enabled := strings.Contains(got, "name: r-sub"); enabled != (renders[i] != nil) {
			t.Fatalf("render %d: the subchart rendered %v, want %v:\n%s", i, enabled, renders[i] != nil, got)
		}
	}
	held, err := archives.held(digest(archive), nil)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := held.chartToRender()
	second, _ := held.chartToRender()
	if first == second {
		t.Fatal("a chart with dependencies was shared between renders")
	}
}

// rendersAsHelmDoes renders the archive with each values in turn in this engine (the archive sent with the first
// request only), checks each output equals what helm template prints for those values alone, and returns them.
func rendersAsHelmDoes(t *testing.T, helm string, archive []byte, renders []map[string]any) []string {
	outputs := make([]string, 0, len(renders))
	for i, values := range renders {
		args := renderArgs{ArchiveSHA: digest(archive), Release: "r", Namespace: "ns", KubeVersion: "1.33",
			Values: values}
		if i == 0 {
			args.Archive = archive
		}
		got, err := render(args)
		if err != nil {
			t.Fatal(err)
		}
		if want := helmTemplate(t, helm, archive, "r", "ns", values); got != want {
			t.Fatalf("render %d differs from helm template:\n--- engine\n%s\n--- helm\n%s", i, got, want)
		}
		outputs = append(outputs, got)
	}
	return outputs
}
