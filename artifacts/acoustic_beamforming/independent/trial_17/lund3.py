import numpy as np
FS=16000
def blocks(e,t0,k):
    ee=e[t0:]; m=len(ee)//k
    return (np.arange(m)*k+k/2)/FS, 10*np.log10(ee[:m*k].reshape(m,k).mean(1)+1e-300)
def lundeby(e,t0,k0=160,margin=10.0,iters=0,comp=False,start='peak',top=20.0,bot=5.0,per10=5,nfrac=0.1):
    N=len(e); noise=e[-int(nfrac*N):].mean(); ndb=10*np.log10(noise)
    tt,db=blocks(e,t0,k0)
    pk=int(np.argmax(db)) if start=='peak' else 0
    idx=np.nonzero(db[pk:]<=ndb+margin)[0]
    end=pk+(idx[0] if len(idx) else len(db)-pk)
    if end-pk<2: end=pk+2
    A=np.polyfit(tt[pk:end],db[pk:end],1)
    if A[0]>=0: A=np.array([-60.0,db[pk]])
    cross=(ndb-A[1])/A[0]
    for _ in range(iters):
        k=int(np.clip((10/abs(A[0]))/per10*FS,16,N//20))
        tt,db=blocks(e,t0,k)
        st=int(np.clip(t0+(cross+10/abs(A[0]))*FS,0,N-int(nfrac*N)))
        noise=e[st:].mean(); ndb=10*np.log10(noise)
        i0s=np.nonzero(db<=ndb+top)[0]
        if not len(i0s): break
        i0=i0s[0]; low=np.nonzero(db[i0:]<ndb+bot)[0]; i1=i0+(low[0] if len(low) else len(db)-i0)
        if i1-i0<2: break
        A2=np.polyfit(tt[i0:i1],db[i0:i1],1)
        if A2[0]>=0: break
        A=A2; newc=(ndb-A[1])/A[0]
        if abs(newc-cross)<1e-3: cross=newc; break
        cross=newc
    c=int(np.clip(t0+cross*FS,t0+10,N))
    ee=e[t0:c]; s=np.cumsum(ee[::-1])[::-1]
    if comp:
        B=A[0]*np.log(10)/10; Ec=10**((A[0]*(c-t0)/FS+A[1])/10)
        s=s+Ec/(1-np.exp(B/FS))
    return 10*np.log10(np.maximum(s,1e-300)/s[0]), c
