package awsapi

import (
	"fmt"
	"hash/fnv"
	"net/netip"
	"slices"

	"github.com/tenon-sh/tenon/pkg/catalog"
)

// Network is the VPC the endpoint serves: its subnets and security groups.
type Network struct {
	VPCID          string
	CIDR           string
	Subnets        []Subnet
	SecurityGroups []SecurityGroup
}

// Subnet is one subnet of the VPC, in a zone of the catalog.
type Subnet struct {
	ID   string
	Zone string // zone name
	CIDR string
	Tags map[string]string
}

// SecurityGroup is one security group of the VPC.
type SecurityGroup struct {
	ID          string
	Name        string
	Description string
	Tags        map[string]string
}

// DiscoveryTag is the tag key Karpenter's getting-started guide puts on the subnets and
// security groups a cluster's nodes use, with the cluster name as value.
const DiscoveryTag = "karpenter.sh/discovery"

// DefaultNetwork is a VPC 10.0.0.0/16 with one private /19 subnet per zone and two security
// groups, a node group and an EKS cluster group: all tagged karpenter.sh/discovery=<cluster>,
// the cluster group also kubernetes.io/cluster/<cluster>=owned and aws:eks:cluster-name.
func DefaultNetwork(cluster string, zones []catalog.Zone) *Network {
	n := &Network{VPCID: resourceID("vpc", cluster), CIDR: "10.0.0.0/16"}
	for i, z := range zones {
		n.Subnets = append(n.Subnets, Subnet{
			ID:   resourceID("subnet", cluster+"/"+z.Name),
			Zone: z.Name,
			CIDR: fmt.Sprintf("10.0.%d.0/19", i*32),
			Tags: map[string]string{
				"Name":                            fmt.Sprintf("%s-private-%s", cluster, z.Name),
				DiscoveryTag:                      cluster,
				"kubernetes.io/role/internal-elb": "1",
			},
		})
	}
	n.SecurityGroups = []SecurityGroup{
		{
			ID: resourceID("sg", cluster+"/node"), Name: cluster + "-node", Description: "Nodes of " + cluster,
			Tags: map[string]string{"Name": cluster + "-node", DiscoveryTag: cluster},
		},
		{
			ID: resourceID("sg", cluster+"/cluster"), Name: "eks-cluster-sg-" + cluster, Description: "EKS created security group applied to ENI that is attached to EKS Control Plane master nodes, as well as any managed workloads.",
			Tags: map[string]string{
				"Name": "eks-cluster-sg-" + cluster, DiscoveryTag: cluster,
				"kubernetes.io/cluster/" + cluster: "owned", "aws:eks:cluster-name": cluster,
			},
		},
	}
	return n
}

// resourceID derives a stable EC2-style ID ("subnet-0…", 17 hex digits) from a name.
func resourceID(prefix, name string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(prefix + "\x00" + name))
	return fmt.Sprintf("%s-0%016x", prefix, h.Sum64())
}

func (n *Network) validate(c *catalog.Catalog) error {
	if _, err := netip.ParsePrefix(n.CIDR); err != nil {
		return fmt.Errorf("network: VPC CIDR %q: %w", n.CIDR, err)
	}
	seen := map[string]bool{}
	for _, sn := range n.Subnets {
		if _, ok := c.Zone(sn.Zone); !ok {
			return fmt.Errorf("network: subnet %s is in zone %q, which the catalog of %s does not have", sn.ID, sn.Zone, c.Region)
		}
		if _, err := netip.ParsePrefix(sn.CIDR); err != nil {
			return fmt.Errorf("network: subnet %s CIDR %q: %w", sn.ID, sn.CIDR, err)
		}
		if sn.ID == "" || seen[sn.ID] {
			return fmt.Errorf("network: subnet ID %q is empty or listed twice", sn.ID)
		}
		seen[sn.ID] = true
	}
	for _, sg := range n.SecurityGroups {
		if sg.ID == "" || seen[sg.ID] {
			return fmt.Errorf("network: security group ID %q is empty or listed twice", sg.ID)
		}
		seen[sg.ID] = true
	}
	return nil
}

func (n *Network) subnet(id string) (Subnet, bool) {
	i := slices.IndexFunc(n.Subnets, func(s Subnet) bool { return s.ID == id })
	if i < 0 {
		return Subnet{}, false
	}
	return n.Subnets[i], true
}

func (n *Network) securityGroup(id string) (SecurityGroup, bool) {
	i := slices.IndexFunc(n.SecurityGroups, func(s SecurityGroup) bool { return s.ID == id })
	if i < 0 {
		return SecurityGroup{}, false
	}
	return n.SecurityGroups[i], true
}

// tagList turns a tag map into a list ordered by key.
func tagList(m map[string]string) []tag {
	out := make([]tag, 0, len(m))
	for k, v := range m {
		out = append(out, tag{Key: k, Value: v})
	}
	slices.SortFunc(out, func(a, b tag) int {
		if a.Key < b.Key {
			return -1
		}
		if a.Key > b.Key {
			return 1
		}
		return 0
	})
	return out
}

// subnetSize is how many addresses a subnet offers to instances: its size less the five AWS
// keeps.
func subnetSize(cidr string) int {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return 0
	}
	bits := p.Addr().BitLen() - p.Bits()
	if bits > 30 {
		bits = 30
	}
	return max(0, 1<<bits-5)
}

// privateIP is the nth instance address of a subnet (after the five AWS keeps).
func privateIP(cidr string, n int) string {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return ""
	}
	a := p.Masked().Addr().As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v += uint32(4 + n%max(1, subnetSize(cidr)))
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String()
}
