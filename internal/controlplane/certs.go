package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// keyPair is a PEM-encoded certificate and its ECDSA private key.
type keyPair struct {
	cert, key []byte
}

// pki is every credential the control plane uses, generated afresh by each Start. ECDSA P-256
// keys keep generation to a millisecond or so.
type pki struct {
	ca      keyPair
	serving keyPair // 127.0.0.1 and localhost: kube-apiserver, kube-scheduler, kube-controller-manager
	clients map[string]keyPair
	saKey   []byte // service-account signing key (PEM, PKCS#8)
	saPub   []byte // its public key (PEM, PKIX)

	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
}

// Client identities. Every one is in system:masters, so RBAC never stands in the way of the
// components (kube-controller-manager runs with --use-service-account-credentials=false, which
// needs more than the bootstrap system:kube-controller-manager role grants).
const (
	adminUser = "tenon-admin"
	mastersGP = "system:masters"
)

var clientUsers = map[string]string{
	"admin":           adminUser,
	Scheduler:         "system:kube-scheduler",
	ControllerManager: "system:kube-controller-manager",
	Kwok:              "kwok",
}

func newPKI() (*pki, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "tenon-controlplane-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	p := &pki{caCert: caCert, caKey: caKey, clients: map[string]keyPair{}}
	if p.ca.key, err = encodeKey(caKey); err != nil {
		return nil, err
	}
	p.ca.cert = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})

	p.serving, err = p.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "tenon-controlplane"},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return nil, err
	}
	for name, user := range clientUsers {
		kp, err := p.issue(&x509.Certificate{
			Subject:     pkix.Name{CommonName: user, Organization: []string{mastersGP}},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		})
		if err != nil {
			return nil, err
		}
		p.clients[name] = kp
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if p.saKey, err = encodeKey(saKey); err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	p.saPub = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	return p, nil
}

// issue signs tmpl (subject, names and usages filled in by the caller) with the CA.
func (p *pki) issue(tmpl *x509.Certificate) (keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, err
	}
	now := time.Now()
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = now.Add(-time.Hour)
	tmpl.NotAfter = now.Add(365 * 24 * time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	if err != nil {
		return keyPair{}, err
	}
	kp := keyPair{cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	kp.key, err = encodeKey(key)
	return kp, err
}

func encodeKey(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(fmt.Sprintf("controlplane: crypto/rand failed: %v", err))
	}
	return n
}

// pkiFiles are the paths write puts the credentials at.
type pkiFiles struct {
	caCert, servingCert, servingKey, saKey, saPub string
}

// write stores the files the components read under dir (mode 0600 for keys).
func (p *pki) write(dir string) (pkiFiles, error) {
	f := pkiFiles{
		caCert:      filepath.Join(dir, "ca.crt"),
		servingCert: filepath.Join(dir, "serving.crt"),
		servingKey:  filepath.Join(dir, "serving.key"),
		saKey:       filepath.Join(dir, "sa.key"),
		saPub:       filepath.Join(dir, "sa.pub"),
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return f, err
	}
	for path, data := range map[string][]byte{
		f.caCert:      p.ca.cert,
		f.servingCert: p.serving.cert,
		f.servingKey:  p.serving.key,
		f.saKey:       p.saKey,
		f.saPub:       p.saPub,
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return f, err
		}
	}
	return f, nil
}
