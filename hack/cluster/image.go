package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

type imageOptions struct {
	out, name  string
	files      listFlag // DEST=SRC
	entrypoint listFlag
	user       int
}

// writeImage writes an OCI image archive (an OCI image layout in a tar, what
// `buildah push oci-archive:` writes and `ctr images import` reads) of one
// layer holding the given files. Without a registry here, this is how the
// cluster's own images (pause, CoreDNS, the smoke check's) come to be;
// containerd names the image after the index's io.containerd.image.name.
func writeImage(o imageOptions) error {
	if o.out == "" || o.name == "" || len(o.files) == 0 {
		return errors.New("image: -o, -name and at least one -file are required")
	}
	layer, diffID, err := layerOf(o.files)
	if err != nil {
		return err
	}
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339)
	cfg, err := json.Marshal(map[string]any{
		"created":      created,
		"architecture": "amd64",
		"os":           "linux",
		"config": map[string]any{
			"User":       fmt.Sprint(o.user),
			"Entrypoint": []string(o.entrypoint),
			"Env":        []string{"PATH=/"},
		},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{diffID}},
	})
	if err != nil {
		return err
	}
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        descriptor("application/vnd.oci.image.config.v1+json", cfg, nil),
		"layers":        []any{descriptor("application/vnd.oci.image.layer.v1.tar+gzip", layer, nil)},
	})
	if err != nil {
		return err
	}
	tag := o.name[strings.LastIndex(o.name, ":")+1:]
	index, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"manifests": []any{descriptor("application/vnd.oci.image.manifest.v1+json", manifest, map[string]string{
			"io.containerd.image.name":          o.name,
			"org.opencontainers.image.ref.name": tag,
		})},
	})
	if err != nil {
		return err
	}

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: "blobs/", Mode: 0o755, Typeflag: tar.TypeDir}); err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: "blobs/sha256/", Mode: 0o755, Typeflag: tar.TypeDir}); err != nil {
		return err
	}
	for _, blob := range [][]byte{layer, cfg, manifest} {
		if err := add("blobs/sha256/"+sum(blob), blob); err != nil {
			return err
		}
	}
	if err := add("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := add("index.json", index); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return os.WriteFile(o.out, buf.Bytes(), 0o644)
}

func descriptor(mediaType string, data []byte, annotations map[string]string) map[string]any {
	d := map[string]any{"mediaType": mediaType, "digest": "sha256:" + sum(data), "size": len(data)}
	if annotations != nil {
		d["annotations"] = annotations
	}
	return d
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// layerOf is a gzipped tar of the files (DEST=SRC; executable as the source
// is) with the directories a container's runtime mounts over (/dev, /proc,
// /sys, /etc, /tmp), and the diff ID of the uncompressed tar.
func layerOf(files []string) (gz []byte, diffID string, err error) {
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	mtime := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, d := range []string{"dev", "etc", "proc", "sys", "tmp"} {
		mode := int64(0o755)
		if d == "tmp" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Name: d + "/", Mode: mode, Typeflag: tar.TypeDir, ModTime: mtime}); err != nil {
			return nil, "", err
		}
	}
	sort.Strings(files)
	for _, f := range files {
		dest, src, ok := strings.Cut(f, "=")
		if !ok {
			return nil, "", fmt.Errorf("image: -file %q is not DEST=SRC", f)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return nil, "", err
		}
		fi, err := os.Stat(src)
		if err != nil {
			return nil, "", err
		}
		mode := int64(0o644)
		if fi.Mode()&0o111 != 0 {
			mode = 0o755
		}
		name := strings.TrimPrefix(path.Clean("/"+dest), "/")
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(data)), Typeflag: tar.TypeReg, ModTime: mtime}); err != nil {
			return nil, "", err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, "", err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, "", err
	}
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	return out.Bytes(), "sha256:" + sum(raw.Bytes()), nil
}
