package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the cluster's one certificate authority and the files it signed,
// all under DIR/pki. Each `cluster up` makes a new one: the cluster starts
// from nothing every time.
type pki struct {
	dir    string
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
}

// identity is a client or serving certificate to issue.
type identity struct {
	file string // DIR/pki/<file>.crt and .key
	cn   string
	orgs []string
	dns  []string
	ips  []string
	// server: a serving certificate (else a client one).
	server bool
}

var identities = []identity{
	{file: "apiserver", cn: "kube-apiserver", server: true,
		dns: []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"},
		ips: []string{nodeIP, "127.0.0.1", apiServerIP}},
	{file: "apiserver-kubelet-client", cn: "kube-apiserver-kubelet-client", orgs: []string{"system:masters"}},
	{file: "kubelet", cn: nodeName, server: true, dns: []string{nodeName, "localhost"}, ips: []string{nodeIP, "127.0.0.1"}},
	{file: "admin", cn: "cluster-admin", orgs: []string{"system:masters"}},
	{file: "controller-manager", cn: "system:kube-controller-manager"},
	{file: "scheduler", cn: "system:kube-scheduler"},
	{file: "kubelet-client", cn: "system:node:" + nodeName, orgs: []string{"system:nodes"}},
	{file: "kube-proxy", cn: "system:kube-proxy"},
	// kube-router gets the rights of its upstream manifest (manifests.go).
	{file: "kube-router", cn: "system:kube-router"},
}

func newPKI(dir string) (*pki, error) {
	p := &pki{dir: filepath.Join(dir, "pki")}
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "browserfleet one-node cluster CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	if p.caCert, err = x509.ParseCertificate(der); err != nil {
		return nil, err
	}
	p.caKey = key
	if err := writePair(p.dir, "ca", der, key); err != nil {
		return nil, err
	}
	for _, id := range identities {
		if err := p.issue(id); err != nil {
			return nil, fmt.Errorf("certificate %s: %w", id.file, err)
		}
	}
	// The service account token key pair.
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if err := writeKey(filepath.Join(p.dir, "sa.key"), saKey); err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	return p, os.WriteFile(filepath.Join(p.dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600)
}

func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }

func (p *pki) issue(id identity) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: id.cn, Organization: id.orgs},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		DNSNames:     id.dns,
	}
	if id.server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	for _, ip := range id.ips {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	if err != nil {
		return err
	}
	return writePair(p.dir, id.file, der, key)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err)
	}
	return n
}

func writePair(dir, name string, der []byte, key *ecdsa.PrivateKey) error {
	if err := os.WriteFile(filepath.Join(dir, name+".crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	return writeKey(filepath.Join(dir, name+".key"), key)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}

// kubeconfig writes a kubeconfig for the identity in file, embedding the
// certificates so that it can be copied anywhere.
func (p *pki) kubeconfig(path, server, file string) error {
	read := func(name string) (string, error) {
		b, err := os.ReadFile(p.path(name))
		return base64.StdEncoding.EncodeToString(b), err
	}
	ca, err := read("ca.crt")
	if err != nil {
		return err
	}
	crt, err := read(file + ".crt")
	if err != nil {
		return err
	}
	key, err := read(file + ".key")
	if err != nil {
		return err
	}
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: browserfleet-node
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: browserfleet-node
  context:
    cluster: browserfleet-node
    user: %s
current-context: browserfleet-node
`, server, ca, file, crt, key, file)
	return os.WriteFile(path, []byte(cfg), 0o600)
}
