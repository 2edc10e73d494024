/** The S3 side of snapshots: a client per destination, streamed uploads, read-back checks. */
export { s3Client, type S3Endpoint } from './client.ts';
export {
  abortUploads,
  defaultPartSize,
  readObject,
  uploadStream,
  verifyObject,
  type ObjectLocation,
} from './upload.ts';
