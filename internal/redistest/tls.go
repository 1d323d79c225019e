package redistest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
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

// TLSClientAuth is redis-server's tls-auth-clients setting: whether a TLS
// server asks clients for a certificate signed by the test's CA.
type TLSClientAuth int

const (
	// ClientCertRequired refuses clients without a certificate
	// (tls-auth-clients yes, Redis's default). TLSConfig then carries the
	// client certificate.
	ClientCertRequired TLSClientAuth = iota
	// ClientCertOptional accepts clients without a certificate but checks
	// one that is presented (tls-auth-clients optional).
	ClientCertOptional
	// ClientCertNone never asks for a certificate (tls-auth-clients no).
	ClientCertNone
)

// String is the value redis-server's tls-auth-clients takes.
func (a TLSClientAuth) String() string {
	switch a {
	case ClientCertRequired:
		return "yes"
	case ClientCertOptional:
		return "optional"
	case ClientCertNone:
		return "no"
	}
	return fmt.Sprintf("TLSClientAuth(%d)", int(a))
}

// TLSServerName is the name the server certificate is issued to (besides
// the addresses 127.0.0.1 and ::1), and the ServerName TLSConfig sets.
const TLSServerName = "localhost"

// TLSFiles are the PEM files of a TLS server or cluster, for tests that run
// a CLI or a child process (redis-cli --tls --cacert CACert --cert
// ClientCert --key ClientKey). All live in the test's temporary directory.
type TLSFiles struct {
	CACert     string // the private CA that signed both certificates
	ServerCert string // the servers' certificate, also their client certificate for replication and the cluster bus
	ServerKey  string
	ClientCert string // a client certificate signed by the CA
	ClientKey  string
}

// tlsFiles is the TLS material of one server or cluster: the files and what
// a Go client needs to use them.
type tlsFiles struct {
	TLSFiles
	auth   TLSClientAuth
	roots  *x509.CertPool
	client tls.Certificate
}

// newTLSFiles makes a CA, a server certificate and a client certificate in
// dir. The keys are ECDSA P-256, which is quick to generate even under -race.
// The certificates are valid from an hour ago for a day, so a skewed clock
// or a long test does not matter.
func newTLSFiles(dir string, auth TLSClientAuth) (*tlsFiles, error) {
	if auth < ClientCertRequired || auth > ClientCertNone {
		return nil, fmt.Errorf("TLS: unknown client auth %v", auth)
	}
	f := &tlsFiles{auth: auth, roots: x509.NewCertPool(), TLSFiles: TLSFiles{
		CACert:     filepath.Join(dir, "ca.crt"),
		ServerCert: filepath.Join(dir, "server.crt"),
		ServerKey:  filepath.Join(dir, "server.key"),
		ClientCert: filepath.Join(dir, "client.crt"),
		ClientKey:  filepath.Join(dir, "client.key"),
	}}
	now := time.Now()
	template := func(cn string) *x509.Certificate {
		serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
		return &x509.Certificate{
			SerialNumber: serial,
			Subject:      pkix.Name{CommonName: cn, Organization: []string{"chronos redistest"}},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(24 * time.Hour),
		}
	}

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("TLS: CA key: %w", err)
	}
	ca := template("redistest CA")
	ca.IsCA = true
	ca.BasicConstraintsValid = true
	ca.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("TLS: CA certificate: %w", err)
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		return nil, fmt.Errorf("TLS: CA certificate: %w", err)
	}
	f.roots.AddCert(ca)
	if err := writePEM(f.CACert, "CERTIFICATE", caDER); err != nil {
		return nil, err
	}

	// redis-server presents its own certificate when it connects to a
	// master or to another cluster node, so it is a client certificate too.
	server := template(TLSServerName)
	server.DNSNames = []string{TLSServerName}
	server.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	server.KeyUsage = x509.KeyUsageDigitalSignature
	server.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	if _, err := issue(server, ca, caKey, f.ServerCert, f.ServerKey); err != nil {
		return nil, err
	}

	client := template("redistest client")
	client.KeyUsage = x509.KeyUsageDigitalSignature
	client.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if f.client, err = issue(client, ca, caKey, f.ClientCert, f.ClientKey); err != nil {
		return nil, err
	}
	return f, nil
}

// issue signs template with the CA, writes the certificate and a new key to
// certFile and keyFile, and returns them as a tls.Certificate.
func issue(template, ca *x509.Certificate, caKey *ecdsa.PrivateKey, certFile, keyFile string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("TLS: key for %s: %w", template.Subject.CommonName, err)
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("TLS: certificate for %s: %w", template.Subject.CommonName, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("TLS: key for %s: %w", template.Subject.CommonName, err)
	}
	if err := writePEM(certFile, "CERTIFICATE", der); err != nil {
		return tls.Certificate{}, err
	}
	if err := writePEM(keyFile, "PRIVATE KEY", keyDER); err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

func writePEM(path, typ string, der []byte) error {
	b := pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("TLS: %w", err)
	}
	return nil
}

// config is a client configuration that trusts the CA and, when the server
// requires it, presents the client certificate.
func (f *tlsFiles) config() *tls.Config {
	c := &tls.Config{RootCAs: f.roots, ServerName: TLSServerName, MinVersion: tls.VersionTLS12}
	if f.auth == ClientCertRequired {
		c.Certificates = []tls.Certificate{f.client}
	}
	return c
}

// serverArgs are the redis-server arguments for the files. Replication runs
// over TLS too, so that one TLS server can be made a replica of another.
func (f *tlsFiles) serverArgs() []string {
	return []string{
		"--tls-cert-file", f.ServerCert,
		"--tls-key-file", f.ServerKey,
		"--tls-ca-cert-file", f.CACert,
		"--tls-auth-clients", f.auth.String(),
		"--tls-replication", "yes",
	}
}

// TLSConfig returns a new client TLS configuration for the server: it
// trusts the test's CA, sets ServerName, and presents the client
// certificate when the server requires one. It is nil for a plaintext
// server.
func (s *Server) TLSConfig() *tls.Config {
	if s.tls == nil {
		return nil
	}
	return s.tls.config()
}

// TLSFiles returns the paths of the server's PEM files; they are empty for
// a plaintext server.
func (s *Server) TLSFiles() TLSFiles {
	if s.tls == nil {
		return TLSFiles{}
	}
	return s.tls.TLSFiles
}
