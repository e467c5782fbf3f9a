package v1

import (
	"encoding/json"
	"hash/fnv"
	"slices"
	"strconv"
)

// Annotations stamped on the NodeClaims launched from an EC2NodeClass, and on the class
// itself, for static drift: a claim whose hash differs from its class's, under the same hash
// version, has drifted.
const (
	AnnotationEC2NodeClassHash        = Group + "/ec2nodeclass-hash"
	AnnotationEC2NodeClassHashVersion = Group + "/ec2nodeclass-hash-version"
)

// EC2NodeClassHashVersion is the version of Hash's encoding. Change it whenever an unchanged
// spec would hash differently (a field added to or removed from the hash, a default of a
// hashed field changed, a hashed field's type changed): claims stamped under another version
// are not judged drifted by their hash. The hashes are tenon's own, not Karpenter's, hence a
// version Karpenter never writes.
const EC2NodeClassHashVersion = "tenon-v1"

// Hash returns the static hash of the fields that shape an instance once launched and that
// are not judged by resolving them again: user data, role or instance profile, tags, kubelet,
// block devices, instance-store policy, network interfaces, metadata options, monitoring,
// public IP, placement group, connection tracking, context, CPU options, and the AMI family in
// effect (so writing out the family an alias implies does not drift), with the cluster's CA
// bundle (which the user data embeds). The selector terms and ipPrefixCount are left out:
// subnets, security groups, AMIs and reservations drift by what they resolve to, not by how
// they are written. Unset and zero values hash alike, and the order of block devices and
// network interfaces does not matter.
func (in *EC2NodeClass) Hash(caBundle string) string {
	s := &in.Spec
	h := struct {
		AMIFamily                string                  `json:"amiFamily"`
		CABundle                 string                  `json:"caBundle,omitempty"`
		UserData                 string                  `json:"userData,omitempty"`
		Role                     string                  `json:"role,omitempty"`
		InstanceProfile          string                  `json:"instanceProfile,omitempty"`
		Tags                     map[string]string       `json:"tags,omitempty"`
		Kubelet                  *KubeletConfiguration   `json:"kubelet,omitempty"`
		BlockDeviceMappings      []string                `json:"blockDeviceMappings,omitempty"`
		InstanceStorePolicy      InstanceStorePolicy     `json:"instanceStorePolicy,omitempty"`
		NetworkInterfaces        []string                `json:"networkInterfaces,omitempty"`
		MetadataOptions          MetadataOptions         `json:"metadataOptions"`
		DetailedMonitoring       bool                    `json:"detailedMonitoring,omitempty"`
		AssociatePublicIPAddress *bool                   `json:"associatePublicIPAddress,omitempty"`
		PlacementGroupSelector   *PlacementGroupSelector `json:"placementGroupSelector,omitempty"`
		ConnectionTracking       *ConnectionTracking     `json:"connectionTracking,omitempty"`
		Context                  string                  `json:"context,omitempty"`
		CPUOptions               *CPUOptions             `json:"cpuOptions,omitempty"`
	}{
		AMIFamily: in.AMIFamily(), CABundle: caBundle, UserData: deref(s.UserData), Role: s.Role,
		InstanceProfile: deref(s.InstanceProfile), Tags: s.Tags, Kubelet: emptyToNil(s.Kubelet),
		BlockDeviceMappings: asSet(s.BlockDeviceMappings), InstanceStorePolicy: deref(s.InstanceStorePolicy),
		NetworkInterfaces: asSet(s.NetworkInterfaces), MetadataOptions: s.GetMetadataOptions(),
		DetailedMonitoring: deref(s.DetailedMonitoring), AssociatePublicIPAddress: s.AssociatePublicIPAddress,
		PlacementGroupSelector: s.PlacementGroupSelector, ConnectionTracking: s.ConnectionTracking,
		Context: deref(s.Context), CPUOptions: s.CPUOptions,
	}
	// encoding/json sorts map keys, so the encoding is canonical.
	b, err := json.Marshal(h)
	if err != nil {
		panic("aws/v1: marshal hash input: " + err.Error())
	}
	f := fnv.New64a()
	_, _ = f.Write(b)
	return strconv.FormatUint(f.Sum64(), 10)
}

// asSet encodes each item and sorts the encodings, so that order does not count.
func asSet[T any](items []*T) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		b, err := json.Marshal(it)
		if err != nil {
			panic("aws/v1: marshal hash input: " + err.Error())
		}
		out = append(out, string(b))
	}
	slices.Sort(out)
	return out
}

// emptyToNil makes an empty kubelet block hash like an absent one.
func emptyToNil(k *KubeletConfiguration) *KubeletConfiguration {
	if k == nil {
		return nil
	}
	if b, _ := json.Marshal(k); string(b) == "{}" {
		return nil
	}
	return k
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
