/** The S3 side of snapshots: a client per destination, streamed uploads, read-back checks. */
export { s3Client, type S3Endpoint } from './client.ts';
export {
  abortOpenUploads,
  abortUploads,
  defaultPartSize,
  openUploads,
  readObject,
  uploadStream,
  verifyObject,
  type ObjectLocation,
  type OpenUpload,
  type UploadOptions,
  type UploadProgress,
} from './upload.ts';
