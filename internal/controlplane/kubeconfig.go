package controlplane

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// contextName is the cluster, user and context name in every kubeconfig written.
const contextName = "tenon"

// writeKubeconfig writes a self-contained kubeconfig (certificates embedded) for the client
// identity kp to path.
func writeKubeconfig(path, server string, ca []byte, kp keyPair) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[contextName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[contextName] = &clientcmdapi.AuthInfo{ClientCertificateData: kp.cert, ClientKeyData: kp.key}
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName, Namespace: "default"}
	cfg.CurrentContext = contextName
	return clientcmd.WriteToFile(*cfg, path)
}

// restConfig is the admin identity's client configuration. Client-side rate limiting is
// raised well above client-go's default of 5 QPS so tests are not throttled.
func restConfig(server string, ca []byte, kp keyPair) *rest.Config {
	return &rest.Config{
		Host: server,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   ca,
			CertData: kp.cert,
			KeyData:  kp.key,
		},
		QPS:   200,
		Burst: 400,
	}
}
