// security.go: the franz-go driver's TLS and SASL settings, given as repeated --config KEY=VALUE
// with librdkafka's names (security.protocol, sasl.mechanism, sasl.username, sasl.password,
// ssl.ca.location, ssl.certificate.location, ssl.key.location; and retries): the security tests log
// in with them.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// configFlag collects --config KEY=VALUE pairs.
type configFlag map[string]string

func (c configFlag) String() string { return fmt.Sprint(map[string]string(c)) }

func (c configFlag) Set(v string) error {
	key, value, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("--config %q: KEY=VALUE expected", v)
	}
	c[key] = value
	return nil
}

// securityOpts turns the settings into kgo options: a TLS dialer for SSL and SASL_SSL, a SASL
// mechanism for SASL_PLAINTEXT and SASL_SSL.
func securityOpts(c configFlag) ([]kgo.Opt, error) {
	protocol := strings.ToUpper(c["security.protocol"])
	var opts []kgo.Opt
	switch protocol {
	case "", "PLAINTEXT", "SASL_PLAINTEXT":
	case "SSL", "SASL_SSL":
		cfg, err := tlsConfig(c)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	default:
		return nil, fmt.Errorf("security.protocol %q is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", protocol)
	}
	if retries := c["retries"]; retries != "" {
		// kgo retries a record forever by default, a failed login too (its metadata wait counts
		// SASL_AUTHENTICATION_FAILED as retryable): a bound makes the produce fail with that error.
		n, err := strconv.Atoi(retries)
		if err != nil {
			return nil, fmt.Errorf("retries %q: %w", retries, err)
		}
		opts = append(opts, kgo.RecordRetries(n))
	}
	if strings.HasPrefix(protocol, "SASL_") {
		mechanism, err := saslMechanism(c)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(mechanism))
	}
	return opts, nil
}

func tlsConfig(c configFlag) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if path := c["ssl.ca.location"]; path != "" {
		pem, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("no certificate in %s", path)
		}
	}
	if cert := c["ssl.certificate.location"]; cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, c["ssl.key.location"])
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

func saslMechanism(c configFlag) (sasl.Mechanism, error) {
	user, pass := c["sasl.username"], c["sasl.password"]
	switch strings.ToUpper(c["sasl.mechanism"]) {
	case "PLAIN":
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism(), nil
	default:
		return nil, fmt.Errorf("sasl.mechanism %q is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512", c["sasl.mechanism"])
	}
}
