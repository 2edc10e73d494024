/** An S3 client for one destination: any S3-compatible endpoint, path-style when asked. */
import { S3Client } from '@aws-sdk/client-s3';

/** Where and how to reach a bucket. Credentials come from the caller, never from the journal. */
export interface S3Endpoint {
  /** e.g. `https://s3.eu-west-1.amazonaws.com` or `http://minio.storage.svc:9000`; AWS's default when unset. */
  readonly endpoint?: string;
  readonly region?: string;
  /** `http://host/bucket/key` instead of `http://bucket.host/key`: most S3-compatible servers need it. */
  readonly forcePathStyle?: boolean;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/**
 * A client that sends checksums only where S3 requires them: S3-compatible servers differ in
 * which of the SDK's default CRC checksums they accept, and every upload here is verified by
 * reading it back anyway.
 */
export function s3Client(to: S3Endpoint): S3Client {
  return new S3Client({
    ...(to.endpoint ? { endpoint: to.endpoint } : {}),
    region: to.region ?? 'us-east-1',
    forcePathStyle: to.forcePathStyle ?? false,
    credentials: { accessKeyId: to.accessKeyId, secretAccessKey: to.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
  });
}
