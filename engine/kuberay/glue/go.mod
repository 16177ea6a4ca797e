module github.com/krc/kuberay-glue

go 1.25.0
