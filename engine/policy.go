package main

// The policy op: krc's organisation policies (CUE files) evaluated by CUE's Go API against many inputs in one
// request. Each input is unified with each policy on its own, so a finding never depends on the other inputs or
// policies. The policies are built once, in a cue.Context of the request's; each input in a context of its own:
// nothing is shared between requests.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
)

type policyArgs struct {
	Policies []policySource `json:"policies"`
	Inputs   []policyInput  `json:"inputs"`
}

type policySource struct {
	Name   string `json:"name"`   // how findings name the policy (krc: the file stem)
	File   string `json:"file"`   // the file name positions carry (krc: the path it shows, policies/x.cue)
	Source string `json:"source"` // the CUE text
}

type policyInput struct {
	Name    string          `json:"name"`
	Env     json.RawMessage `json:"env"`     // a JSON object
	Objects json.RawMessage `json:"objects"` // a JSON array (absent: [])
}

type policyPosition struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

// policyError is one CUE error: a finding (the path of the value it is about: labels and list indexes) or, in
// `broken`, a policy CUE cannot evaluate. Positions are those in the policy's own file, CUE's order.
type policyError struct {
	Policy    string           `json:"policy"`
	Path      []any            `json:"path"`
	Message   string           `json:"message"`
	Positions []policyPosition `json:"positions"`
}

type policyResult struct {
	Broken   []policyError   `json:"broken"`   // when not empty, nothing was evaluated
	Findings [][]policyError `json:"findings"` // per input, in the order given
}

// namesObjects: a policy whose text never says `objects` cannot constrain the rendered objects, so it is unified
// with an empty list instead of them (the same findings, less work).
var namesObjects = regexp.MustCompile(`\bobjects\b`)

// The input as CUE: JSON is CUE, and given through a definition it is closed, so a field a policy requires but
// the input lacks is an error ("field not allowed") rather than an incomplete value. The top level stays open:
// a policy may add fields of its own (totalGpus: list.Sum(...) & <=32).
const (
	inputDefinition = "#krcInput"
	inputFile       = "krc-input"
)

func policyOp(raw json.RawMessage) (any, error) {
	var args policyArgs
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, fmt.Errorf("bad policy arguments: %w", err)
	}
	return evaluatePolicies(args)
}

type builtPolicy struct {
	source   policySource
	value    cue.Value
	objects  bool
	topLevel topLevel // what it declares besides env and objects (policy_together.go)
}

func evaluatePolicies(args policyArgs) (*policyResult, error) {
	result := &policyResult{Broken: []policyError{}, Findings: make([][]policyError, len(args.Inputs))}
	policies, broken := buildPolicies(cuecontext.New(), args.Policies)
	if len(broken) > 0 {
		result.Broken = broken
		result.Findings = [][]policyError{}
		return result, nil
	}
	joint := jointly(policies)
	for i, input := range args.Inputs {
		// a context per input: CUE keeps every instance a context built until the context goes, so one context
		// for the whole request would hold every input's objects to its end; the policies, built once, are
		// unified with values of other contexts (which CUE allows)
		forms, err := inputValues(cuecontext.New(), input, policies)
		if err != nil {
			return nil, err
		}
		found := []policyError{}
		if joint.passes(forms) {
			result.Findings[i] = found
			continue
		}
		for _, policy := range policies {
			if err := policy.value.Unify(forms.read(policy.objects)).Validate(cue.Concrete(true)); err != nil {
				found = append(found, policyErrors(policy.source, err)...)
			}
		}
		result.Findings[i] = found
	}
	return result, nil
}

// buildPolicies builds each policy in ctx; the errors of those that do not build.
func buildPolicies(ctx *cue.Context, sources []policySource) ([]builtPolicy, []policyError) {
	policies := make([]builtPolicy, 0, len(sources))
	var broken []policyError
	for _, source := range sources {
		value, declared, err := buildPolicy(ctx, source)
		if err != nil {
			broken = append(broken, policyErrors(source, err)...)
			continue
		}
		policies = append(policies, builtPolicy{source, value, namesObjects.MatchString(source.Source), declared})
	}
	return policies, broken
}

// buildPolicy compiles a policy with `env` and `objects` declared (as top, `_`) after its own declarations, so it
// may read them without declaring them, as it reads the fields krc gives it. The error is about the policy
// itself: a syntax error, a reference to nothing, an import CUE does not have.
func buildPolicy(ctx *cue.Context, source policySource) (cue.Value, topLevel, error) {
	file, err := parser.ParseFile(source.File, source.Source)
	if err != nil {
		return cue.Value{}, topLevel{}, err
	}
	for spec := range file.ImportSpecs() {
		if path, _ := strconv.Unquote(spec.Path.Value); strings.Contains(path, ".") {
			return cue.Value{}, topLevel{}, errors.Newf(spec.Path.Pos(), "import %q: a policy can import only "+
				"CUE's standard library (list, strings, regexp, ...); write what it needs in the policy", path)
		}
	}
	declared := topLevelOf(file.Decls)
	for _, name := range []string{"env", "objects"} {
		file.Decls = append(file.Decls, &ast.Field{Label: ast.NewIdent(name), Value: ast.NewIdent("_")})
	}
	// an instance of krc's own (no loader: only CUE's standard library can be imported, nothing is looked up on
	// disk or in a registry); building it sets its Err to the compile errors alone, not to evaluation errors a
	// policy on its own may have (an index into a list the environment has not filled yet)
	instance := build.NewContext().NewInstance(source.File, nil)
	if err := instance.AddSyntax(file); err != nil {
		return cue.Value{}, declared, err
	}
	value := ctx.BuildInstance(instance)
	if instance.Err != nil {
		return value, declared, instance.Err
	}
	return value, declared, nil
}

// inputForms is one input as CUE values: with its objects, and with an empty list in their place.
type inputForms struct {
	withObjects, withoutObjects cue.Value
}

// read is the form a policy gets that reads the objects or not.
func (forms inputForms) read(objects bool) cue.Value {
	if objects {
		return forms.withObjects
	}
	return forms.withoutObjects
}

// inputValues compiles one input as the policies read it: with its objects, and with an empty list in their place
// (each only when some policy reads it that way).
func inputValues(ctx *cue.Context, input policyInput, policies []builtPolicy) (forms inputForms, err error) {
	env, objects := []byte(input.Env), []byte(input.Objects)
	if len(objects) == 0 {
		objects = []byte("[]")
	}
	// checked as decoding env into a map and objects into a slice would (objects may be null), without building
	// either: an environment's objects are tens of kilobytes, read once more below
	if !json.Valid(env) || jsonStart(env) != '{' || !json.Valid(objects) ||
		(jsonStart(objects) != '[' && string(bytes.TrimSpace(objects)) != "null") {
		return forms, fmt.Errorf("input %q: env must be a JSON object and objects a JSON array",
			input.Name)
	}
	compile := func(objects []byte) (cue.Value, error) {
		if file, ok := inputSyntax(env, objects); ok {
			value := ctx.BuildFile(file)
			if value.Err() == nil {
				return value, nil
			}
		}
		// CUE refuses the input (text that is not UTF-8, a key given twice): its error for the text, as always
		value := ctx.CompileString(inputText(env, objects), cue.Filename(inputFile))
		if err := value.Err(); err != nil {
			return value, fmt.Errorf("input %q cannot be given to CUE: %v", input.Name, err)
		}
		return value, nil
	}
	for _, policy := range policies {
		if policy.objects && !forms.withObjects.Exists() {
			if forms.withObjects, err = compile(objects); err != nil {
				return
			}
		} else if !policy.objects && !forms.withoutObjects.Exists() {
			if forms.withoutObjects, err = compile([]byte("[]")); err != nil {
				return
			}
		}
	}
	return
}

// jsonStart is the first byte of valid JSON text past its leading white space.
func jsonStart(text []byte) byte {
	trimmed := bytes.TrimLeft(text, " \t\r\n")
	if len(trimmed) == 0 {
		return 0
	}
	return trimmed[0]
}

// inputText is the input as CUE text: the data, and the definition that closes it.
func inputText(env, objects []byte) string {
	return fmt.Sprintf("%s%s%s%s\n", inputHead, env, inputMiddle, objects)
}

const (
	inputHead   = "env: " + inputDefinition + ".env\nobjects: " + inputDefinition + ".objects\n" + inputDefinition + ": env: "
	inputMiddle = "\n" + inputDefinition + ": objects: "
)

// inputSyntax is the syntax CUE's parser makes of inputText, built without reading the JSON again with a parser
// made for all of CUE (a third of the op's time went to parsing megabytes of JSON as CUE): every node at its
// offset in that text. Not ok when CUE's scanner would refuse the text (bytes that are not UTF-8, a byte order
// mark inside a string): the parser then gives its error.
func inputSyntax(env, objects []byte) (*ast.File, bool) {
	for _, text := range [][]byte{env, objects} {
		if !utf8.Valid(text) || bytes.Contains(text, byteOrderMark) {
			return nil, false
		}
	}
	objectsAt := len(inputHead) + len(env) + len(inputMiddle)
	file := token.NewFile(inputFile, -1, objectsAt+len(objects)+1)
	for _, part := range []struct {
		text []byte
		at   int
	}{{[]byte(inputHead), 0}, {env, len(inputHead)}, {[]byte(inputMiddle), len(inputHead) + len(env)},
		{objects, objectsAt}} {
		for i, c := range part.text { // the lines, as the scanner records them (a position's line and column)
			if c == '\n' {
				file.AddLine(part.at + i + 1)
			}
		}
	}
	at := func(offset int) token.Pos { return file.Pos(offset, token.NoRelPos) }
	selected := func(offset int, label string) *ast.SelectorExpr {
		return &ast.SelectorExpr{X: &ast.Ident{NamePos: at(offset), Name: inputDefinition},
			Sel: &ast.Ident{NamePos: at(offset + len(inputDefinition) + 1), Name: label}}
	}
	field := func(offset int, label string, value ast.Expr) *ast.Field {
		return &ast.Field{Label: &ast.Ident{NamePos: at(offset), Name: label}, TokenPos: at(offset + len(label)),
			Value: value}
	}
	// "#krcInput: label: json" at offset
	definition := func(offset int, label string, json ast.Expr) *ast.Field {
		inner := offset + len(inputDefinition) + 2
		return field(offset, inputDefinition, &ast.StructLit{Elts: []ast.Decl{field(inner, label, json)}})
	}
	objectsLine := len(inputHead) + len(env) + 1
	return &ast.File{Filename: inputFile, Decls: []ast.Decl{
		field(0, "env", selected(5, "env")),
		field(19, "objects", selected(28, "objects")),
		definition(46, "env", (&jsonSyntax{text: env, file: file, base: len(inputHead)}).expr()),
		definition(objectsLine, "objects", (&jsonSyntax{text: objects, file: file, base: objectsAt}).expr()),
	}}, true
}

var byteOrderMark = []byte("\uFEFF")

// jsonSyntax reads JSON text (already known to be valid) into the syntax CUE's parser makes of it: structs with
// quoted labels, lists, literals as written (CUE reads the literal's text as the parser would have given it), a
// negative number as minus applied to the number. Each node is at its offset in file, base being the text's.
type jsonSyntax struct {
	text []byte
	at   int
	file *token.File
	base int
}

func (s *jsonSyntax) expr() ast.Expr {
	s.space()
	pos := s.file.Pos(s.base+s.at, token.NoRelPos)
	start := s.at
	switch c := s.text[s.at]; {
	case c == '{':
		s.at++
		x := &ast.StructLit{Lbrace: pos}
		for s.space(); s.text[s.at] != '}'; s.space() {
			label := s.expr().(*ast.BasicLit)
			s.space()
			colon := s.file.Pos(s.base+s.at, token.NoRelPos)
			s.at++
			x.Elts = append(x.Elts, &ast.Field{Label: label, TokenPos: colon, Value: s.expr()})
		}
		x.Rbrace = s.file.Pos(s.base+s.at, token.NoRelPos)
		s.at++
		return x
	case c == '[':
		s.at++
		x := &ast.ListLit{Lbrack: pos}
		for s.space(); s.text[s.at] != ']'; s.space() {
			x.Elts = append(x.Elts, s.expr())
		}
		x.Rbrack = s.file.Pos(s.base+s.at, token.NoRelPos)
		s.at++
		return x
	case c == '"':
		for s.at++; s.text[s.at] != '"'; s.at++ {
			if s.text[s.at] == '\\' {
				s.at++
			}
		}
		s.at++
		return &ast.BasicLit{ValuePos: pos, Kind: token.STRING, Value: string(s.text[start:s.at])}
	case c == '-':
		s.at++
		return &ast.UnaryExpr{OpPos: pos, Op: token.SUB, X: s.expr()}
	case c >= '0' && c <= '9':
		kind := token.INT
		for ; s.at < len(s.text) && strings.IndexByte("0123456789.eE+-", s.text[s.at]) >= 0; s.at++ {
			if c := s.text[s.at]; c == '.' || c == 'e' || c == 'E' {
				kind = token.FLOAT
			}
		}
		return &ast.BasicLit{ValuePos: pos, Kind: kind, Value: string(s.text[start:s.at])}
	default: // true, false, null
		kind := token.NULL
		if c == 't' {
			kind = token.TRUE
		} else if c == 'f' {
			kind = token.FALSE
		}
		s.at += len(kind.String())
		return &ast.BasicLit{ValuePos: pos, Kind: kind, Value: kind.String()}
	}
}

// space skips white space and the commas between elements.
func (s *jsonSyntax) space() {
	for s.at < len(s.text) && strings.IndexByte(" \t\r\n,", s.text[s.at]) >= 0 {
		s.at++
	}
}

// policyErrors turns CUE's errors into krc's form, keeping only positions in the policy's own file.
func policyErrors(source policySource, err error) []policyError {
	var out []policyError
	for _, each := range errors.Errors(err) {
		format, args := each.Msg()
		found := policyError{Policy: source.Name, Path: pathOf(each.Path()), Message: fmt.Sprintf(format, args...),
			Positions: []policyPosition{}}
		seen := map[policyPosition]bool{}
		for _, pos := range errors.Positions(each) {
			at := policyPosition{pos.Filename(), pos.Line(), pos.Column()}
			if at.File == source.File && !seen[at] {
				seen[at] = true
				found.Positions = append(found.Positions, at)
			}
		}
		out = append(out, found)
	}
	sort.SliceStable(out, func(i, j int) bool { return fmt.Sprint(out[i].Path) < fmt.Sprint(out[j].Path) })
	return out
}

// pathOf reads CUE's path labels: list indexes become numbers, quoted labels ("my-field") their text.
func pathOf(labels []string) []any {
	path := make([]any, 0, len(labels))
	for _, label := range labels {
		if index, err := strconv.Atoi(label); err == nil && index >= 0 {
			path = append(path, index)
		} else if text, err := strconv.Unquote(label); err == nil {
			path = append(path, text)
		} else {
			path = append(path, label)
		}
	}
	return path
}
