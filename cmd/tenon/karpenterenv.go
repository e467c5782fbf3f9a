package main

import (
	"fmt"
	"strconv"
)

// karpenterEnv maps a `tenon controller` flag to the environment variable Karpenter's chart
// sets for the same setting, so that a Karpenter deployment's environment configures tenon too.
// TENON_<FLAG> wins over it when both are set, and a flag on the command line over both. value,
// when set, turns the variable's value into the flag's (a port into a bind address).
var karpenterEnv = map[string]struct {
	name  string
	value func(string) (string, error)
}{
	"kube-client-qps":           {name: "KUBE_CLIENT_QPS"},
	"kube-client-burst":         {name: "KUBE_CLIENT_BURST"},
	"enable-profiling":          {name: "ENABLE_PROFILING"},
	"batch-idle-duration":       {name: "BATCH_IDLE_DURATION"},
	"batch-max-duration":        {name: "BATCH_MAX_DURATION"},
	"feature-gates":             {name: "FEATURE_GATES"},
	"log-level":                 {name: "LOG_LEVEL"},
	"min-values-policy":         {name: "MIN_VALUES_POLICY"},
	"preference-policy":         {name: "PREFERENCE_POLICY"},
	"leader-election-namespace": {name: "LEADER_ELECTION_NAMESPACE"},
	"metrics-bind-address":      {name: "METRICS_PORT", value: portAddress},
	"health-probe-bind-address": {name: "HEALTH_PROBE_PORT", value: portAddress},
	"leader-elect":              {name: "DISABLE_LEADER_ELECTION", value: negate},
}

// portAddress turns Karpenter's port number into a bind address on every interface.
func portAddress(v string) (string, error) {
	p, err := strconv.Atoi(v)
	if err != nil || p < 0 || p > 65535 {
		return "", fmt.Errorf("not a port number")
	}
	return ":" + v, nil
}

// negate turns DISABLE_LEADER_ELECTION into --leader-elect.
func negate(v string) (string, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return "", err
	}
	return strconv.FormatBool(!b), nil
}
