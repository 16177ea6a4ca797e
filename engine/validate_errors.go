package main

import (
	"errors"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The validate op's errors as krc reads them: structured field errors, their origin and type.

// collect: the strategy's own errors, exact, plus the causes of what rest.Before* added around them (the generic
// metadata checks) or returned instead (a namespace mismatch).
func collect(err error, recorded field.ErrorList) field.ErrorList {
	if err == nil {
		return nil
	}
	out := append(field.ErrorList{}, recorded...)
	seen := map[string]bool{}
	for _, e := range recorded {
		seen[e.Field+"\x00"+string(e.Type)+"\x00"+e.ErrorBody()] = true
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil || len(status.Status().Details.Causes) == 0 {
		if len(recorded) == 0 {
			out = append(out, field.Invalid(nil, nil, err.Error()))
		}
		return out
	}
	for _, cause := range status.Status().Details.Causes {
		key := cause.Field + "\x00" + string(cause.Type) + "\x00" + cause.Message
		if seen[key] {
			continue
		}
		seen[key] = true
		// the cause's message is the error body already; keep it as the detail of an error without a value
		out = append(out, &field.Error{Type: field.ErrorType(cause.Type), Field: cause.Field, BadValue: omitted{},
			Detail: cause.Message})
	}
	return out
}

// omitted marks a cause rebuilt from a StatusError: its message already holds the value.
type omitted struct{}

func containsError(errs field.ErrorList, e fieldError) bool {
	for _, other := range errs {
		if other.Field == e.Field && shortType(other.Type) == e.Type && other.Detail == e.Detail {
			return true
		}
	}
	return false
}

func shortType(t field.ErrorType) string {
	switch t {
	case field.ErrorTypeInternal:
		return "Internal"
	}
	return strings.TrimPrefix(string(t), "FieldValue")
}

// report turns field errors into the op's form. origin "" classifies each one.
func (c *compiledCRD) report(errs field.ErrorList, origin string, version *compiledVersion) []fieldError {
	out := make([]fieldError, 0, len(errs))
	seen := map[string]bool{}
	for _, e := range errs {
		message := e.ErrorBody()
		if _, rebuilt := e.BadValue.(omitted); rebuilt {
			message = e.Detail
		}
		key := e.Field + "\x00" + string(e.Type) + "\x00" + message
		if seen[key] {
			continue
		}
		seen[key] = true
		field := e.Field
		if field == "<nil>" {
			field = ""
		}
		out = append(out, fieldError{Path: parseFieldPath(field), Field: field, Type: shortType(e.Type),
			Message: message, Detail: e.Detail, Origin: classify(e, origin, version)})
	}
	return out
}

func classify(e *field.Error, origin string, version *compiledVersion) string {
	if origin != "" {
		return origin
	}
	detail := e.Detail
	switch {
	case strings.HasPrefix(detail, "some validation rules were not checked"):
		return "skipped"
	case version != nil && version.celMessages[strings.TrimSpace(detail)],
		strings.HasPrefix(detail, "failed rule: "),
		strings.Contains(detail, "cost budget"), strings.Contains(detail, "evaluating rule"),
		strings.Contains(detail, "rule compile"), strings.Contains(detail, "for rule: "):
		return "cel"
	case e.Type == field.ErrorTypeDuplicate:
		return "list"
	case e.Field == "metadata" || strings.HasPrefix(e.Field, "metadata."):
		return "metadata"
	case e.Field == "apiVersion" || e.Field == "kind" || e.Field == "<nil>" || e.Field == "":
		return "request"
	}
	return "schema"
}

// parseFieldPath reads a path as field.Path prints it: names joined by dots, [index] and [key] after them.
func parseFieldPath(text string) []any {
	out := []any{}
	for i := 0; i < len(text); {
		switch text[i] {
		case '.':
			i++
		case '[':
			end := strings.IndexByte(text[i:], ']')
			if end < 0 {
				return append(out, text[i:])
			}
			inside := text[i+1 : i+end]
			if n, err := strconv.Atoi(inside); err == nil && n >= 0 {
				out = append(out, n)
			} else {
				out = append(out, inside)
			}
			i += end + 1
		default:
			end := strings.IndexAny(text[i:], ".[")
			if end < 0 {
				end = len(text) - i
			}
			out = append(out, text[i:i+end])
			i += end
		}
	}
	return out
}
