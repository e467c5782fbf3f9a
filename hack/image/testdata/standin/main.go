// Command standin stands in for tenon in hack/image's test: it is quick to cross-compile and
// prints the version the image build stamped into it, as `tenon version` does.
package main

import (
	"fmt"

	"github.com/tenon-sh/tenon/internal/version"
)

func main() { fmt.Println(version.Get()) }
