//go:build azblob

package storage

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/clickrecon/clickrecon/internal/safehttp"
)

// azblob:// is built only with the tag azblob.
func init() { openers["azblob"] = openAzure }

// azureStore is an Azure Blob Storage container, through Azure's own
// client.
type azureStore struct{ c *container.Client }

// azureService is where the storage account's service is, from the
// environment and the URL's query.
type azureService struct {
	account, domain, protocol, sasToken string
	cdn, localEmulator                  bool
}

// openAzure opens an azblob:// container with the credentials the
// environment names (AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY,
// AZURE_STORAGE_SAS_TOKEN, AZURE_STORAGE_CONNECTION_STRING, or else the
// default Azure identity: a workload or managed identity, the Azure CLI),
// with an HTTP client under safehttp's policy. The service is
// <account>.blob.core.windows.net unless AZURE_STORAGE_DOMAIN,
// AZURE_STORAGE_PROTOCOL, AZURE_STORAGE_IS_CDN or
// AZURE_STORAGE_IS_LOCAL_EMULATOR say otherwise; the query's domain,
// protocol, cdn, localemu and storage_account override them, as they did
// when the URL was opened through gocloud.dev/blob.
func openAzure(ctx context.Context, u *url.URL, _ openOptions) (objectStore, error) {
	conn := cmp.Or(os.Getenv("AZURE_STORAGE_CONNECTION_STRING"), os.Getenv("AZURE_STORAGEBLOB_CONNECTIONSTRING"))
	svc := azureService{
		account:  os.Getenv("AZURE_STORAGE_ACCOUNT"),
		protocol: os.Getenv("AZURE_STORAGE_PROTOCOL"),
		domain:   os.Getenv("AZURE_STORAGE_DOMAIN"),
		sasToken: os.Getenv("AZURE_STORAGE_SAS_TOKEN"),
	}
	svc.cdn, _ = strconv.ParseBool(os.Getenv("AZURE_STORAGE_IS_CDN"))
	svc.localEmulator, _ = strconv.ParseBool(os.Getenv("AZURE_STORAGE_IS_LOCAL_EMULATOR"))
	for part := range strings.SplitSeq(conn, ";") {
		k, v, _ := strings.Cut(part, "=")
		switch {
		case k == "AccountName" && svc.account == "":
			svc.account = v
		case k == "DefaultEndpointsProtocol" && svc.protocol == "":
			svc.protocol = v
		}
	}
	boolean := func(p *bool) func(string) error {
		return func(raw string) (err error) { *p, err = strconv.ParseBool(raw); return err }
	}
	err := queryParams(u.Query(), map[string]func(string) error{
		"domain":          func(v string) error { svc.domain = v; return nil },
		"protocol":        func(v string) error { svc.protocol = v; return nil },
		"storage_account": func(v string) error { svc.account = v; return nil },
		"cdn":             boolean(&svc.cdn),
		"localemu":        boolean(&svc.localEmulator),
	})
	if err != nil {
		return nil, err
	}
	svcURL, err := svc.url()
	if err != nil {
		return nil, err
	}
	containerURL := svcURL.JoinPath(u.Host)
	containerURL.RawQuery = svc.sasToken

	opts := &container.ClientOptions{}
	opts.Transport = safehttp.Client(nil, safehttp.SameOriginSameMethod)
	opts.Retry.ShouldRetry = azureShouldRetry
	var c *container.Client
	key := os.Getenv("AZURE_STORAGE_KEY")
	switch {
	case svc.account != "" && key != "":
		cred, err := azblob.NewSharedKeyCredential(svc.account, key)
		if err != nil {
			return nil, fmt.Errorf("AZURE_STORAGE_KEY: %w", err)
		}
		c, err = container.NewClientWithSharedKeyCredential(containerURL.String(), cred, opts)
		if err != nil {
			return nil, err
		}
	case svc.sasToken != "":
		c, err = container.NewClientWithNoCredential(containerURL.String(), opts) // the token is in the URL
	case conn != "":
		c, err = container.NewClientFromConnectionString(conn, u.Host, opts)
	default:
		cred, cerr := azidentity.NewDefaultAzureCredential(nil)
		if cerr != nil {
			return nil, fmt.Errorf("no Azure credentials: %w", cerr)
		}
		c, err = container.NewClient(containerURL.String(), cred, opts)
	}
	if err != nil {
		return nil, err
	}
	return &azureStore{c: c}, nil
}

// azureDomains are the storage domains a URL may name, besides a local
// emulator's.
var azureDomains = map[string]bool{
	"blob.core.windows.net":       true,
	"blob.core.usgovcloudapi.net": true,
	"blob.core.chinacloudapi.cn":  true,
	"blob.core.cloudapi.de":       true,
}

// url is the service's URL: https://<account>.<domain>, or for a local
// emulator http://<domain>/<account>, or for a CDN https://<domain>.
func (s azureService) url() (*url.URL, error) {
	if s.account == "" {
		return nil, errors.New("no Azure storage account: set AZURE_STORAGE_ACCOUNT")
	}
	if strings.IndexFunc(s.account, func(r rune) bool { return r > unicode.MaxASCII || !unicode.IsLetter(r) && !unicode.IsDigit(r) }) >= 0 {
		return nil, fmt.Errorf("the Azure storage account %q is not alphanumeric", s.account)
	}
	domain := cmp.Or(strings.ToLower(s.domain), "blob.core.windows.net")
	protocol := cmp.Or(strings.ToLower(s.protocol), "https")
	switch {
	case protocol == "http" && !s.localEmulator:
		return nil, errors.New("the Azure protocol http is for a local emulator only (AZURE_STORAGE_IS_LOCAL_EMULATOR=true)")
	case protocol == "http":
		if !isLoopback(domain) {
			return nil, fmt.Errorf("the Azure local emulator's domain %q is not a loopback address", domain)
		}
	case protocol == "https" && s.localEmulator:
		return nil, errors.New("an Azure local emulator takes protocol http")
	case protocol == "https":
		if !azureDomains[domain] {
			return nil, fmt.Errorf("the Azure storage domain %q is not one of Azure's", domain)
		}
	default:
		return nil, fmt.Errorf("the Azure protocol %q: want https (or http for a local emulator)", protocol)
	}
	switch {
	case s.localEmulator:
		return &url.URL{Scheme: protocol, Host: domain, Path: "/" + s.account}, nil
	case s.cdn:
		return &url.URL{Scheme: protocol, Host: domain}, nil
	}
	return &url.URL{Scheme: protocol, Host: s.account + "." + domain}, nil
}

// isLoopback reports whether host (with or without a port) is localhost
// or a loopback address.
func isLoopback(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// azureShouldRetry is azcore's default retry decision (a transport error,
// or 408, 429, 500, 502, 503, 504), except that a refused redirect is
// never retried: the same answer would come again, after the backoff.
func azureShouldRetry(resp *http.Response, err error) bool {
	if err != nil {
		return !errors.Is(err, safehttp.ErrRedirect)
	}
	switch resp.StatusCode {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// azureCode classifies an Azure Blob Storage error.
func azureCode(err error) errCode {
	if bloberror.HasCode(err, bloberror.BlobNotFound, bloberror.ContainerNotFound, bloberror.ResourceNotFound) {
		return codeNotFound
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return statusCode(re.StatusCode)
	}
	return codeUnknown
}

// Azure's metadata names must be C# identifiers: clickrecon-write is
// stored as clickrecon__0x2d__write, as gocloud.dev/blob stored it, so
// that reports written before are read alike. Values are URL-escaped.
var azureEscaped = regexp.MustCompile(`__0x([0-9a-f]+)__`)

func azureMetadataName(k string) string {
	var b strings.Builder
	for i, r := range k {
		if r == '_' || r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) && i > 0) {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "__0x%x__", r)
		}
	}
	return b.String()
}

func azureMetadataNameBack(k string) string {
	return azureEscaped.ReplaceAllStringFunc(k, func(m string) string {
		r, err := strconv.ParseInt(azureEscaped.FindStringSubmatch(m)[1], 16, 32)
		if err != nil {
			return m
		}
		return string(rune(r))
	})
}

func (s *azureStore) list(ctx context.Context, prefix, delimiter, token string) ([]listObject, string, error) {
	var page []listObject
	var next *string
	var marker *string
	if token != "" {
		marker = &token
	}
	if delimiter == "" {
		resp, err := s.c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &prefix, Marker: marker}).NextPage(ctx)
		if err != nil {
			return nil, "", withCode(err, azureCode)
		}
		for _, b := range resp.Segment.BlobItems {
			page = append(page, listObject{Key: deref(b.Name)})
		}
		next = resp.NextMarker
	} else {
		resp, err := s.c.NewListBlobsHierarchyPager(delimiter, &container.ListBlobsHierarchyOptions{Prefix: &prefix, Marker: marker}).NextPage(ctx)
		if err != nil {
			return nil, "", withCode(err, azureCode)
		}
		for _, p := range resp.Segment.BlobPrefixes {
			page = append(page, listObject{Key: deref(p.Name), IsDir: true})
		}
		for _, b := range resp.Segment.BlobItems {
			page = append(page, listObject{Key: deref(b.Name)})
		}
		next = resp.NextMarker
	}
	return page, deref(next), nil
}

func deref[T any](p *T) (v T) {
	if p != nil {
		v = *p
	}
	return v
}

func (s *azureStore) attributes(ctx context.Context, key string) (objectAttributes, error) {
	p, err := s.c.NewBlobClient(key).GetProperties(ctx, nil)
	if err != nil {
		return objectAttributes{}, withCode(err, azureCode)
	}
	md := make(map[string]string, len(p.Metadata))
	for k, v := range p.Metadata {
		val := deref(v)
		if u, err := url.PathUnescape(val); err == nil {
			val = u
		}
		md[azureMetadataNameBack(strings.ToLower(k))] = val
	}
	return objectAttributes{Size: deref(p.ContentLength), ETag: string(deref(p.ETag)), ModTime: deref(p.LastModified), Metadata: md}, nil
}

func (s *azureStore) get(ctx context.Context, key string) (objectBody, error) {
	resp, err := s.c.NewBlobClient(key).DownloadStream(ctx, nil)
	if err != nil {
		return objectBody{}, withCode(err, azureCode)
	}
	size := int64(-1)
	if resp.ContentLength != nil {
		size = *resp.ContentLength
	}
	return objectBody{ReadCloser: resp.Body, Size: size, ETag: string(deref(resp.ETag))}, nil
}

func (s *azureStore) put(ctx context.Context, key string, data []byte, contentType string, metadata map[string]string) error {
	md := make(map[string]*string, len(metadata))
	for k, v := range metadata {
		md[azureMetadataName(k)] = new(url.PathEscape(v))
	}
	_, err := s.c.NewBlockBlobClient(key).Upload(ctx, streaming.NopCloser(bytes.NewReader(data)), &blockblob.UploadOptions{
		HTTPHeaders: &blob.HTTPHeaders{BlobContentType: &contentType},
		Metadata:    md,
	})
	return withCode(err, azureCode)
}

func (s *azureStore) delete(ctx context.Context, key string) error {
	_, err := s.c.NewBlobClient(key).Delete(ctx, nil)
	return withCode(err, azureCode)
}

func (s *azureStore) close() error { return nil }
