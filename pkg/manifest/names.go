package manifest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
)

// The API server's name generator appends five characters of this alphabet (no vowels, no
// confusable digits) to a prefix of at most 58.
const (
	suffixAlphabet         = "bcdfghjklmnpqrstvwxz2456789"
	suffixLength           = 5
	maxGeneratedNameLength = 63 - suffixLength
)

// uidSpace is the UUID namespace of the uids given to objects that have none.
var uidSpace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://tenon.sh/manifest"))

// uidFor returns a uid derived from what identifies an object, so that the same manifests
// give the same uids.
func uidFor(kind, namespace, name string) types.UID {
	return types.UID(uuid.NewSHA1(uidSpace, []byte(kind+"/"+namespace+"/"+name)).String())
}

// generateName returns base, cut to 58 characters, and a suffix derived from seed, as the API
// server completes a generateName but without randomness.
func generateName(base, seed string) string {
	if len(base) > maxGeneratedNameLength {
		base = base[:maxGeneratedNameLength]
	}
	h := fnv.New64a()
	h.Write([]byte(seed))
	v := h.Sum64()
	suffix := make([]byte, suffixLength)
	for i := range suffix {
		suffix[i] = suffixAlphabet[v%uint64(len(suffixAlphabet))]
		v /= uint64(len(suffixAlphabet))
	}
	return base + string(suffix)
}

// templateHash returns the hash a controller puts in the names of the objects it creates from
// a template (a Deployment's ReplicaSets, a StatefulSet's revisions): a 32-bit FNV-1a hash of
// the template, encoded with the same alphabet. It differs from kube-controller-manager's,
// which hashes the template as the API server stores it, with every default applied.
func templateHash(template any) string {
	b, err := json.Marshal(template)
	if err != nil {
		panic(fmt.Sprintf("manifest: encoding a pod template: %v", err))
	}
	h := fnv.New32a()
	h.Write(b)
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// namer hands out pod names, never the same one twice in a namespace.
type namer struct {
	taken map[string]bool // namespace/name
}

func newNamer() *namer { return &namer{taken: map[string]bool{}} }

// reserve records a name fixed by its owner, such as a bare pod's or a StatefulSet pod's.
func (n *namer) reserve(namespace, name string) { n.taken[namespace+"/"+name] = true }

// generate completes base with a suffix derived from seed, drawing again on a collision.
func (n *namer) generate(namespace, base, seed string) string {
	for i := 0; ; i++ {
		name := generateName(base, fmt.Sprintf("%s#%d", seed, i))
		if !n.taken[namespace+"/"+name] {
			n.reserve(namespace, name)
			return name
		}
	}
}
